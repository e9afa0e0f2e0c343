/**
 * Dead letters for the ops console: each dead-letter topic with its source and how many records it
 * retains, a topic's records (headers, reason, source, the value decoded with today's schemas, or
 * its bytes in base64), and the replay of chosen records. Reading and replaying are the dead-letters
 * command's own (lib/dead-letters/): a replay re-appends each record to its source topic and writes
 * it to the ledger topic `dead-letters.replays`, so a record already replayed, or whose value still
 * does not decode, is reported and not appended again (no `force` here: that stays a command-line
 * decision, docs/decisions/log-and-topics/0008-dead-letters-tool.md).
 */
import type { Kafka } from 'kafkajs';
import type { SharedConfig } from '../../../lib/config/shared.ts';
import { DeadLetterError } from '../../../lib/dead-letters/errors.ts';
import { type DeadLetter, readDeadLetters, topicRanges } from '../../../lib/dead-letters/read.ts';
import { replayDeadLetters } from '../../../lib/dead-letters/replay.ts';
import {
  DEAD_LETTER_TOPICS,
  type DeadLetterTopic,
  deadLetterTopic,
} from '../../../lib/dead-letters/topics.ts';
import { UnavailableError } from '../../../lib/errors.ts';
import { TOPICS, topicName } from '../../../lib/log/topics.ts';
import type { Logger } from '../../../lib/logger.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';

type Config = Pick<SharedConfig, 'kafka'>;

export interface DeadLetterTopicView {
  /** Short name (`rounds`, `wallet`), accepted in the paths like the topic's name. */
  readonly name: string;
  /** Topic name with the namespace. */
  readonly topic: string;
  /** Where a replay re-appends a record. */
  readonly source_topic: string;
  /** Retained records (high − low watermark, summed over partitions); 0 when the topic does not exist. */
  readonly count: number;
  readonly exists: boolean;
}

export interface DeadLetterRecordView {
  readonly partition: number;
  readonly offset: number;
  /** Record key as UTF-8, or null. */
  readonly key: string | null;
  /** Append time of the dead-letter record, ISO 8601. */
  readonly timestamp: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly reason: string | null;
  /** Where the record was read from before it was dead-lettered (nulls when the headers do not say). */
  readonly source: { topic: string | null; partition: number | null; offset: number | null };
  /** The decoded value as JSON when it decodes with today's schemas, else the bytes in base64. */
  readonly value: unknown;
  readonly value_encoding: 'json' | 'base64';
  /** Why the value did not decode, or null. */
  readonly decode_error: string | null;
  /** Earlier replays (the ledger), oldest first. */
  readonly replays: readonly { to: { topic: string; partition: number; offset: number }; at: string }[];
}

/** A dead-letter refusal as the API's error (404, 400 or 503). */
function apiError(err: unknown): unknown {
  if (!(err instanceof DeadLetterError)) return err;
  switch (err.code) {
    case 'UNKNOWN_TOPIC':
    case 'TOPIC_MISSING':
      return new NotFoundError('TOPIC_NOT_FOUND', err.message);
    case 'OFFSET_OUT_OF_RANGE':
    case 'NOTHING_MATCHES':
      return new NotFoundError('RECORD_NOT_FOUND', err.message);
    case 'BROKER_UNREACHABLE':
      return new UnavailableError(err.message, err);
    default:
      return new InvalidInputError('INVALID_INPUT', err.message);
  }
}

/**
 * The dead-letter topic named `name`: its short name, its name without the namespace, or its full
 * name. @throws NotFoundError TOPIC_NOT_FOUND.
 */
export function resolveDeadLetterTopic(config: Config, name: string): DeadLetterTopic {
  const ns = config.kafka.topicNamespace;
  const bare = ns !== '' && name.startsWith(ns) ? name.slice(ns.length) : name;
  try {
    return deadLetterTopic(bare);
  } catch (err) {
    throw apiError(err);
  }
}

/** Every dead-letter topic with its source and retained count. @throws UnavailableError. */
export async function listDeadLetterTopics(kafka: Kafka, config: Config): Promise<DeadLetterTopicView[]> {
  const out: DeadLetterTopicView[] = [];
  for (const t of DEAD_LETTER_TOPICS) {
    const topic = topicName(config, t.topic);
    const ranges = await topicRanges(kafka, config, topic).catch((err: unknown) => {
      throw apiError(err);
    });
    out.push({
      name: t.name,
      topic,
      source_topic: topicName(config, t.source),
      count: Number((ranges ?? []).reduce((s, r) => s + (r.high - r.low), 0n)),
      exists: ranges !== null,
    });
  }
  return out;
}

/** JSON of a decoded value: 64-bit integers as strings. */
const plain = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)));

function recordView(t: DeadLetterTopic, d: DeadLetter): DeadLetterRecordView {
  let value: unknown;
  let encoding: 'json' | 'base64' = 'json';
  let decodeError: string | null = null;
  try {
    value = plain(t.decode(d.value));
  } catch (err) {
    decodeError = (err as Error).message;
    encoding = 'base64';
    value = d.value?.toString('base64') ?? null;
  }
  const s = d.info.source;
  return {
    partition: d.partition,
    offset: Number(d.offset),
    key: d.key?.toString('utf8') ?? null,
    timestamp: new Date(d.timestamp).toISOString(),
    headers: d.headers,
    reason: d.info.reason,
    source: {
      topic: s.topic,
      partition: s.partition,
      offset: s.offset === null ? null : Number(s.offset),
    },
    value,
    value_encoding: encoding,
    decode_error: decodeError,
    replays: d.replays.map((e) => ({
      to: { topic: e.target_topic, partition: e.target_partition, offset: e.target_offset },
      at: new Date(e.at).toISOString(),
    })),
  };
}

/**
 * Records of dead-letter topic `name` in (partition, offset) order: at most `limit`, starting after
 * `after` (the position of the last record of the previous page) when given.
 * @throws NotFoundError TOPIC_NOT_FOUND; UnavailableError when the broker cannot be reached.
 */
export async function readDeadLetterRecords(
  kafka: Kafka,
  config: Config,
  name: string,
  limit: number,
  after?: { partition: number; offset: number },
): Promise<DeadLetterRecordView[]> {
  const t = resolveDeadLetterTopic(config, name);
  const log = await readDeadLetters(kafka, config, t).catch((err: unknown) => {
    throw apiError(err);
  });
  return log.records
    .filter(
      (d) =>
        !after ||
        d.partition > after.partition ||
        (d.partition === after.partition && d.offset > BigInt(after.offset)),
    )
    .slice(0, limit)
    .map((d) => recordView(t, d));
}

/** What a replay did. */
export interface ReplayView {
  readonly topic: string;
  readonly target: string;
  /** Re-appended now, with where each went. */
  readonly replayed: readonly {
    partition: number;
    offset: number;
    to: { partition: number; offset: number };
  }[];
  /** Already replayed earlier (the ledger says when): not appended again. */
  readonly already_replayed: readonly { partition: number; offset: number; at: string }[];
  /** Still not decodable with today's schemas: not appended (its consumer would dead-letter it again). */
  readonly undecodable: readonly { partition: number; offset: number; reason: string }[];
}

/**
 * Replays `records` of dead-letter topic `name` (see the module comment).
 * @throws NotFoundError TOPIC_NOT_FOUND or RECORD_NOT_FOUND (an offset outside the retained range,
 *   or none of them a record), with nothing appended; UnavailableError; kafkajs errors while appending.
 */
export async function replayRecords(
  kafka: Kafka,
  config: Config,
  logger: Logger,
  name: string,
  records: readonly { partition: number; offset: number }[],
): Promise<ReplayView> {
  const t = resolveDeadLetterTopic(config, name);
  try {
    const o = await replayDeadLetters({
      config,
      kafka,
      logger,
      topic: t.name,
      selection: { offsets: records.map((r) => ({ partition: r.partition, offset: BigInt(r.offset) })) },
    });
    return {
      topic: o.topic,
      target: o.target,
      replayed: o.replayed.map((r) => ({
        partition: r.partition,
        offset: Number(r.offset),
        to: { partition: r.to?.partition ?? -1, offset: Number(r.to?.offset ?? -1) },
      })),
      already_replayed: o.alreadyReplayed.map((r) => ({
        partition: r.partition,
        offset: Number(r.offset),
        at: new Date(r.at).toISOString(),
      })),
      undecodable: o.undecodable.map((r) => ({
        partition: r.partition,
        offset: Number(r.offset),
        reason: r.reason,
      })),
    };
  } catch (err) {
    throw apiError(err);
  }
}

/** The source topics' base names, for the route descriptions. */
export const DEAD_LETTER_NAMES = DEAD_LETTER_TOPICS.map((t) => `${t.name} (${TOPICS[t.topic].base})`);
