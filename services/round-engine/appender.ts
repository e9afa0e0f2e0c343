/**
 * Appends one game's events (its rounds' lifecycle: RoundOpened, BettingClosed, the cash-outs of a
 * crash flight, RoundFinished) to the log exactly once, in the order they are given. The producer is idempotent (one request in
 * flight, acks from all in-sync replicas), so kafkajs's own retries never duplicate a record.
 * A send that still fails (broker restart, longer outage) is retried forever with capped
 * backoff (SEND_RETRY, p-retry); before each re-send the log tail is read, and if the event
 * landed after all the engine moves on without sending it again. The same producer is kept
 * across retries where it can be: kafkajs rolls the sequence number back after a failed send, so
 * a re-send carries the same producer id and sequence and the broker drops it should the first
 * one land late. Only when the broker no longer accepts that producer's state (NEW_PRODUCER_ERRORS)
 * or the producer disconnected is it replaced.
 */
import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import pRetry from 'p-retry';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import type { Logger } from '../../lib/logger.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { EngineMetrics } from './metrics.ts';

/** Backoff of a failed send (ms): 100, 200, 400 … capped at 2000, jittered, never giving up. */
export const SEND_RETRY = {
  forever: true,
  retries: 5,
  factor: 2,
  minTimeout: 100,
  maxTimeout: 2000,
  randomize: true,
} as const;

/**
 * kafkajs' own retries of a send (each refreshes the metadata first), ms: 100 growing to at most
 * 500, and no count limit (kafkajs' idempotent producer, lib/log/kafka.ts). When the broker leading
 * the game's partition dies, the partition has no leader until the cluster fences that broker
 * (`broker.session.timeout.ms`, docs/deployment.md "Broker loss"); the client's default waits,
 * growing to 5 s, then kept the game still for up to 5 s after the new leader was known (a gap of
 * 7.6–12 s between appends with a 3 s session, `npx tsx bench/broker-failover.ts`).
 */
export const PRODUCER_RETRY = { initialRetryTime: 100, maxRetryTime: 500 } as const;

/** Broker errors after which an idempotent producer's id/sequence state is unusable. */
export const NEW_PRODUCER_ERRORS = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'DUPLICATE_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/**
 * True when `err` (or an error it wraps, via `cause` or kafkajs's `originalError`) says the
 * producer must be replaced: a NEW_PRODUCER_ERRORS type, or a disconnected producer.
 */
export function needsNewProducer(err: unknown): boolean {
  const seen = new Set<unknown>();
  let e = err as { type?: unknown; message?: unknown; cause?: unknown; originalError?: unknown } | undefined;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    if (typeof e.type === 'string' && NEW_PRODUCER_ERRORS.has(e.type)) return true;
    if (typeof e.message === 'string' && /producer is disconnected/i.test(e.message)) return true;
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return false;
}

/** Longest wait for an in-flight send when closing, ms. */
const CLOSE_WAIT_MS = 5000;

export interface AppenderDeps {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly slug: GameSlug;
  readonly logger: Logger;
  readonly metrics: EngineMetrics;
  /** Whether the event (or a later round of the game) is already in the log; reads the log. */
  readonly landed: (event: RoundEvent) => Promise<boolean>;
  readonly clock: () => number;
}

export interface Appender {
  connect(): Promise<void>;
  /** Resolves once the event is in the log; rejects only when `signal` aborts. */
  append(event: RoundEvent, signal: AbortSignal): Promise<void>;
  /** True while a producer is connected. */
  connected(): boolean;
  close(): Promise<void>;
}

export function createAppender(deps: AppenderDeps): Appender {
  const { kafka, topic, slug, logger, metrics } = deps;
  let producer: Producer | null = null;
  let isConnected = false;
  let inflight: Promise<unknown> | null = null;
  let lastError: unknown = null;

  async function open(): Promise<Producer> {
    // The Java-compatible partitioner (kafkajs 2's default, named to silence its warning): a game's
    // key lands on the same partition as with any other Kafka client.
    const p = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: PRODUCER_RETRY,
    });
    p.on(p.events.DISCONNECT, () => {
      if (producer === p) isConnected = false;
    });
    await p.connect();
    producer = p;
    isConnected = true;
    return p;
  }

  async function replace(): Promise<Producer> {
    logger.info(
      { reason: (lastError as Error | null)?.message ?? 'not connected' },
      'replacing the producer',
    );
    const old = producer;
    producer = null;
    isConnected = false;
    await old?.disconnect().catch(() => {});
    return open();
  }

  async function attempt(event: RoundEvent, value: Buffer, n: number): Promise<void> {
    if (n > 1) {
      if (await deps.landed(event)) {
        logger.info(
          { round_id: event.round_id, type: event.type },
          'event already in the log after a failed send; not re-sending',
        );
        return;
      }
      if (!isConnected || needsNewProducer(lastError)) await replace();
    }
    const p = producer ?? (await open());
    await p.send({
      topic,
      acks: -1,
      messages: [{ key: slug, value, headers: { 'event-type': event.type } }],
    });
  }

  return {
    async connect() {
      await open();
    },
    connected: () => isConnected,
    async append(event, signal) {
      const value = encodeRoundEvent(event);
      await pRetry(
        (n) => {
          const run = attempt(event, value, n);
          inflight = run.catch(() => {});
          return run;
        },
        {
          ...SEND_RETRY,
          signal,
          onFailedAttempt: (err) => {
            lastError = err;
            metrics.sendRetries.inc({ game: slug });
            logger.warn(
              { round_id: event.round_id, type: event.type, attempt: err.attemptNumber, err: err.message },
              'append failed; retrying',
            );
          },
        },
      );
      lastError = null;
      if (event.type !== 'RoundFinished') return;
      metrics.appended.inc({ game: slug });
      metrics.appendLatency.observe({ game: slug }, Math.max(0, deps.clock() - event.finished_at) / 1000);
    },
    async close() {
      if (inflight) await Promise.race([inflight, new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
      const p = producer;
      producer = null;
      isConnected = false;
      await p?.disconnect().catch(() => {});
    },
  };
}
