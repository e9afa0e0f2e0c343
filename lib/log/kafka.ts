/**
 * kafkajs client construction with pino logging, plus log-reading helpers shared by the round
 * engine (recovery), the SSE resume and the analytics replay.
 */
import { randomUUID } from 'node:crypto';
import {
  type Consumer,
  type ConsumerConfig,
  Kafka,
  type KafkaConfig,
  logLevel as KafkaLogLevel,
  type KafkaMessage,
  type LogEntry,
  type Producer,
  type ProducerConfig,
} from 'kafkajs';
import type { SharedConfig } from '../config/shared.ts';
import type { Logger } from '../logger.ts';

// kafkajs warns on every producer that its default partitioner changed in v2; we always used v2's.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';

type PinoLevel = 'error' | 'warn' | 'info' | 'debug';

const levelName: Record<number, PinoLevel> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

/**
 * Messages of the Kafka protocol errors a broker answers while it sets up the coordinator of a
 * consumer group or of an idempotent producer's id (codes 14 COORDINATOR_LOAD_IN_PROGRESS, 15
 * COORDINATOR_NOT_AVAILABLE, 16 NOT_COORDINATOR; texts as in kafkajs' src/protocol/error.js). kafkajs
 * logs each response carrying one at ERROR, then retries: on a broker that has just started (no
 * consumer-offsets topic yet) every group meets them once.
 */
export const COORDINATOR_STARTUP_ERRORS: ReadonlySet<string> = new Set([
  "The coordinator is loading and hence can't process requests for this group",
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
]);

/**
 * The pino level of one kafkajs log entry: kafkajs' own level, except a coordinator error
 * (COORDINATOR_STARTUP_ERRORS) while `starting`, which is debug:
 * a group forming or a producer getting its id meets it and kafkajs retries. Once everything of the
 * client has started, the same error means a coordinator lost on a running cluster and keeps its level.
 * @param level kafkajs' logLevel (ERROR 1 … DEBUG 5)
 * @param error the entry's `error` field (kafkajs puts the protocol error's message there)
 * @param starting whether a consumer of the client has not yet joined its group, or a producer not
 *   yet finished connecting
 */
export function kafkaLogLevel(level: number, error: unknown, starting: boolean): PinoLevel {
  const name = levelName[level] ?? 'info';
  if (name === 'error' && starting && typeof error === 'string' && COORDINATOR_STARTUP_ERRORS.has(error))
    return 'debug';
  return name;
}

/**
 * kafkajs' Kafka with this project's defaults for what it makes:
 * - an idempotent producer that names no retry count retries without a count limit, so kafkajs has
 *   no cause for its "Limiting retries for the idempotent producer may invalidate EoS guarantees"
 *   warning (it warns for any count below Number.MAX_SAFE_INTEGER). The waits between tries are
 *   capped by the client's `maxRetryTime`; a broker that cannot be reached ends the send when the
 *   client's own connection retries (`retries` of createKafka) are spent, since kafkajs does not
 *   retry that error (KafkaJSNumberOfRetriesExceeded; the send rejects with a
 *   KafkaJSNonRetriableError). An error kafkajs retries that persists on a live broker (a topic
 *   that does not exist) is retried until it clears, logged at error each time (docs/decisions/runtime/0004-kafka-client-kafkajs.md).
 * - every consumer and producer counts as starting (`starting`) until it has joined its group once,
 *   or finished connecting (an idempotent producer: got its producer id), or disconnected or
 *   stopped (kafkajs stops a consumer that crashed for good).
 */
class ProjectKafka extends Kafka {
  readonly #starting: Set<object>;

  constructor(config: KafkaConfig, starting: Set<object>) {
    super(config);
    this.#starting = starting;
  }

  override producer(config: ProducerConfig = {}): Producer {
    const unlimited = config.idempotent === true && config.retry?.retries === undefined;
    const p = super.producer(
      unlimited ? { ...config, retry: { ...config.retry, retries: Number.MAX_SAFE_INTEGER } } : config,
    );
    this.#starting.add(p);
    const connect = p.connect.bind(p);
    p.connect = async () => {
      try {
        await connect();
      } finally {
        this.#starting.delete(p);
      }
    };
    return p;
  }

  override consumer(config: ConsumerConfig): Consumer {
    const c = super.consumer(config);
    this.#starting.add(c);
    const started = () => this.#starting.delete(c);
    c.on(c.events.GROUP_JOIN, started);
    c.on(c.events.DISCONNECT, started);
    c.on(c.events.STOP, started);
    return c;
  }
}

/** How long a connection to a broker may take before kafkajs gives up on it and retries, ms. */
export const CONNECTION_TIMEOUT_MS = 5_000;

/**
 * A kafkajs client for `clientId`, logging through `logger` at kafkajs' levels (WARN and above),
 * except coordinator errors while its consumers join and its producers connect (kafkaLogLevel).
 * Idempotent producers retry without a count limit (ProjectKafka above); everything else, and the
 * client's connections, retry `options.retries` times (default 8, about 20 s against a broker that
 * refuses connections), waits growing from 200 ms up to 5 s, so a CLI can give up on an unreachable
 * broker within seconds. A connection may take CONNECTION_TIMEOUT_MS.
 */
export function createKafka(
  config: Pick<SharedConfig, 'kafka'>,
  clientId: string,
  logger: Logger,
  options: { retries?: number } = {},
): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  const starting = new Set<object>();
  return new ProjectKafka(
    {
      clientId,
      brokers: [...config.kafka.brokers],
      logLevel: KafkaLogLevel.WARN,
      // kafkajs' 1 s default times the connection with a timer, so it also counts the event loop:
      // a service loading its modules on a busy machine (npm start starts ten at once) can block it
      // for longer, and a loopback connection that took milliseconds is logged as an error and retried.
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      retry: { initialRetryTime: 200, retries: options.retries ?? 8, maxRetryTime: 5_000 },
      logCreator:
        () =>
        ({ level, log: entry }: LogEntry) => {
          const { message, ...rest } = entry;
          log[kafkaLogLevel(level, entry.error, starting.size > 0)](rest, message);
        },
    },
    starting,
  );
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
