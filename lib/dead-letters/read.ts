/**
 * Reading dead-letter topics and the replay ledger straight from the log (lib/log/kafka.ts readRange:
 * a throw-away consumer group that commits nothing). Dead-letter topics are small (a record per
 * failure), so every command reads the whole retained range; the ledger (`dead-letters.replays`)
 * says which records were already replayed.
 */
import type { Kafka } from 'kafkajs';
import type { DeadLetterReplayed } from '../../schemas/generated/avro.ts';
import type { SharedConfig } from '../config/shared.ts';
import { decode } from '../log/codec.ts';
import { readRange } from '../log/kafka.ts';
import { topicName } from '../log/topics.ts';
import { DeadLetterError } from './errors.ts';
import { type DeadLetterInfo, type DeadLetterTopic, headerStrings } from './topics.ts';

/** Subject of a ledger record (schemas/DeadLetterReplayed.v1.avsc). */
export const REPLAYED_SUBJECT = 'casino.ops.DeadLetterReplayed';

/** Retained offsets of one partition: [low, high). */
export interface PartitionRange {
  readonly partition: number;
  readonly low: bigint;
  readonly high: bigint;
}

/** One record of a dead-letter topic. */
export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /** Append time, Unix ms. */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly info: DeadLetterInfo;
  /** Earlier replays of this record, oldest first. */
  readonly replays: readonly DeadLetterReplayed[];
}

/** Ledger key of a dead-letter record. */
export const ledgerKey = (topic: string, partition: number, offset: bigint | string) =>
  `${topic}/${partition}/${offset}`;

/**
 * Partition ranges of `topic`, or null when the topic does not exist.
 * @throws DeadLetterError BROKER_UNREACHABLE.
 */
export async function topicRanges(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  topic: string,
): Promise<PartitionRange[] | null> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic)) return null;
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets
      .map((o) => ({ partition: o.partition, low: BigInt(o.low), high: BigInt(o.high) }))
      .sort((a, b) => a.partition - b.partition);
  } catch (err) {
    throw new DeadLetterError(
      'BROKER_UNREACHABLE',
      `cannot reach the Kafka brokers ${config.kafka.brokers.join(',')}: ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** What `ranges` hold of `partition`, for a refusal's message: its offsets, or the partitions there are. */
export function rangeHint(ranges: readonly PartitionRange[], partition: number): string {
  const r = ranges.find((x) => x.partition === partition);
  return r
    ? `partition ${partition} holds offsets ${r.low} to ${r.high - 1n}`
    : `partitions: ${ranges.map((x) => x.partition).join(', ')}`;
}

/** Every replay recorded in the ledger, by ledger key (an absent ledger topic is an empty ledger). */
export async function readLedger(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  timeoutMs = 60_000,
): Promise<Map<string, DeadLetterReplayed[]>> {
  const topic = topicName(config, 'deadLetterReplays');
  const out = new Map<string, DeadLetterReplayed[]>();
  const ranges = await topicRanges(kafka, config, topic);
  if (!ranges) return out;
  const all: DeadLetterReplayed[] = [];
  await readRange(
    kafka,
    topic,
    new Map(ranges.map((r) => [r.partition, r.low])),
    (r) => {
      try {
        all.push(decode(r.message.value, REPLAYED_SUBJECT).value as DeadLetterReplayed);
      } catch {
        // not a ledger record; nothing else writes this topic
      }
    },
    timeoutMs,
  );
  for (const e of all.sort((a, b) => a.at - b.at)) {
    const key = ledgerKey(e.dlq_topic, e.dlq_partition, String(e.dlq_offset));
    out.set(key, [...(out.get(key) ?? []), e]);
  }
  return out;
}

/** A dead-letter topic's ranges and records, with their replays. */
export interface DeadLetterLog {
  readonly topic: string;
  readonly ranges: readonly PartitionRange[];
  readonly records: readonly DeadLetter[];
}

/**
 * Reads every retained record of `dlq`, in partition and offset order, with their replays.
 * @throws DeadLetterError TOPIC_MISSING or BROKER_UNREACHABLE.
 */
export async function readDeadLetters(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  dlq: DeadLetterTopic,
  timeoutMs = 60_000,
): Promise<DeadLetterLog> {
  const topic = topicName(config, dlq.topic);
  const ranges = await topicRanges(kafka, config, topic);
  if (!ranges)
    throw new DeadLetterError(
      'TOPIC_MISSING',
      `topic ${topic} does not exist (TOPIC_NAMESPACE "${config.kafka.topicNamespace}")`,
    );
  const ledger = await readLedger(kafka, config, timeoutMs);
  const records: DeadLetter[] = [];
  await readRange(
    kafka,
    topic,
    new Map(ranges.map((r) => [r.partition, r.low])),
    ({ partition, message }) => {
      const headers = headerStrings(message.headers);
      records.push({
        topic,
        partition,
        offset: BigInt(message.offset),
        timestamp: Number(message.timestamp),
        key: message.key,
        value: message.value,
        headers,
        info: dlq.info(headers, message.value),
        replays: ledger.get(ledgerKey(topic, partition, message.offset)) ?? [],
      });
    },
    timeoutMs,
  );
  records.sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset));
  return { topic, ranges, records };
}
