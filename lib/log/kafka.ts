/**
 * kafkajs client construction with pino logging, plus log-reading helpers shared by the round
 * engine (recovery), the SSE resume and the analytics replay.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel as KafkaLogLevel, type KafkaMessage, type LogEntry } from 'kafkajs';
import type { SharedConfig } from '../config/shared.ts';
import type { Logger } from '../logger.ts';

// kafkajs warns on every producer that its default partitioner changed in v2; we always used v2's.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';

const levelName: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

/**
 * A kafkajs client for `clientId`, logging through `logger` (kafkajs INFO chatter is demoted to debug).
 * `options.retries` (default 8, about 20 s against a broker that refuses connections) lets a CLI
 * give up on an unreachable broker within seconds.
 */
export function createKafka(
  config: Pick<SharedConfig, 'kafka'>,
  clientId: string,
  logger: Logger,
  options: { retries?: number } = {},
): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId,
    brokers: [...config.kafka.brokers],
    logLevel: KafkaLogLevel.WARN,
    retry: { initialRetryTime: 200, retries: options.retries ?? 8, maxRetryTime: 5_000 },
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        log[levelName[level] ?? 'info'](rest, message);
      },
  });
}

/** One record as read by `readRange`. */
export interface LogRecord {
  readonly partition: number;
  readonly offset: string;
  readonly message: KafkaMessage;
}

/**
 * Reads records of `topic` from each partition's `from` offset (inclusive) up to the high-water
 * mark at call time (or `options.to`, exclusive, when lower), with a throw-away consumer group
 * that commits nothing.
 * @param from offset per partition; partitions absent from the map are not read.
 * @param onRecord called in offset order within a partition.
 * @param options a number is `timeoutMs`; `timeoutMs` gives up (rejects) after this long, default
 *   60000 ms; `to` is the end offset (exclusive) per partition, default the high-water mark.
 */
export async function readRange(
  kafka: Kafka,
  topic: string,
  from: ReadonlyMap<number, bigint>,
  onRecord: (r: LogRecord) => void | Promise<void>,
  options: number | { timeoutMs?: number; to?: ReadonlyMap<number, bigint> } = 60_000,
): Promise<void> {
  const timeoutMs = typeof options === 'number' ? options : (options.timeoutMs ?? 60_000);
  const to = typeof options === 'number' ? undefined : options.to;
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    ends = new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  const pending = new Map<number, bigint>();
  for (const [p, start] of from) {
    const high = ends.get(p) ?? 0n;
    const limit = to?.get(p);
    const end = limit !== undefined && limit < high ? limit : high;
    if (start < end) pending.set(p, end);
  }
  if (pending.size === 0) return;

  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`readRange(${topic}) timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
            const end = pending.get(batch.partition);
            if (end === undefined) return;
            for (const message of batch.messages) {
              const off = BigInt(message.offset);
              if (off >= end) {
                pending.delete(batch.partition);
                break;
              }
              await onRecord({ partition: batch.partition, offset: message.offset, message });
              resolveOffset(message.offset);
              if (off + 1n >= end) {
                pending.delete(batch.partition);
                break;
              }
            }
            await heartbeat();
            if (pending.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
      for (const [p] of pending) consumer.seek({ topic, partition: p, offset: String(from.get(p) ?? 0n) });
    });
  } finally {
    await consumer.disconnect();
  }
}

/** Low and high offsets per partition of `topic`. */
export async function partitionOffsets(
  kafka: Kafka,
  topic: string,
): Promise<Map<number, { low: bigint; high: bigint }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]));
  } finally {
    await admin.disconnect();
  }
}
