/**
 * The wallet saga (issue 5 item 5): consumes `wallet-transactions` in its consumer group and makes
 * the operator callbacks the events ask for (plan.ts), appending each outcome to the same key.
 *
 * No head-of-line blocking: eachBatch only admits records into a KeyedScheduler (per-player
 * queues, at most `maxInFlight` unfinished; beyond that the consumer is paused until a slot
 * frees), so a slow or failing player or operator delays only its own key. Offsets are committed
 * per partition up to the scheduler's watermark, the lowest offset whose work is not finished.
 *
 * Crash and kill safety (at-least-once, no double money): after a crash everything past the
 * committed offset is processed again. That is safe because (1) the operator is idempotent on
 * provider_tx_id, reused on every retry and every re-run with the same body and webhook-id, so a
 * repeated debit, credit or rollback returns the first answer and moves no money; (2) the events
 * appended here carry the same tx_id when repeated, and their consumers (settlement, the wallet
 * projector) dedupe on it. A bet whose first run timed out and whose re-run succeeds ends debited
 * and refunded (its RollbackRequested is on the log), never settled.
 */
import type { Consumer, Kafka, Producer } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import { type CallbackClient, createCallbackClient } from '../../lib/http/callback-client.ts';
import { trackConsumerLag } from '../../lib/log/consumer-lag.ts';
import { topicName } from '../../lib/log/topics.ts';
import { decodeWalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import { jobKey, planJob } from '../../rules/wallet/plan.ts';
import type { WalletSagaConfig } from './config.ts';
import { createDirectory, type Directory } from './directory.ts';
import { type ExecutorDeps, executeJob } from './executor.ts';
import { createSagaMetrics, type SagaMetrics } from './metrics.ts';
import { KeyedScheduler } from './scheduler.ts';

export interface WalletSagaDeps {
  readonly config: Pick<WalletSagaConfig, 'kafka' | 'walletSaga' | 'deadLetters'>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly logger: Logger;
  /** Unix ms clock (default Date.now). */
  readonly now?: () => number;
  /** Jitter source in [0, 1) (default Math.random). */
  readonly random?: () => number;
  /** Called once when the saga cannot go on (an outcome could not be appended, the consumer crashed); main.ts exits. */
  readonly onFatal?: (err: unknown) => void;
}

export interface WalletSaga {
  /** Connects, joins the group and starts consuming. @throws kafkajs errors. */
  start(): Promise<void>;
  /** Stops retries and consumption, commits what is finished, disconnects. */
  stop(): Promise<void>;
  /** In the consumer group and not failed. */
  ready(): boolean;
  status(): { joined: boolean; failed: boolean; inFlight: number; paused: boolean };
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
  readonly metrics: SagaMetrics;
}

/** Builds the saga; nothing connects before `start`. */
export function buildWalletSaga(deps: WalletSagaDeps): WalletSaga {
  const { config, kafka, logger } = deps;
  const log = logger.child({ component: 'wallet-saga' });
  const now = deps.now ?? Date.now;
  const topic = topicName(config, 'walletTransactions');
  const metrics = createSagaMetrics();
  const directory: Directory = createDirectory(deps.sql, config.walletSaga.cacheMs);
  const client: CallbackClient = createCallbackClient();
  const abort = new AbortController();
  // 10 s session (kafkajs default 30 s): a restart after a SIGKILL gets its partitions back that much
  // sooner. Safe because eachBatch only admits records to the per-player queues and returns, so
  // heartbeats are never starved by a slow operator.
  const consumer: Consumer = kafka.consumer({
    groupId: config.walletSaga.group,
    maxWaitTimeInMs: 100,
    sessionTimeout: 10_000,
  });
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const lagOptions = { kafka, registry: metrics.registry, refreshMs: config.kafka.lagRefreshMs, logger: log };
  // Position = the scheduler's watermark (lowest unfinished offset), as committed.
  const lag = trackConsumerLag({
    ...lagOptions,
    name: 'wallet-saga',
    groupId: config.walletSaga.group,
    consumer,
  });
  // Parked callbacks not yet replayed: the dead-letter topic past the replay group's commit.
  const parkedBacklog = trackConsumerLag({
    ...lagOptions,
    name: 'wallet-replay',
    groupId: config.deadLetters.walletReplayGroup,
    topics: [topicName(config, 'walletDeadLetter')],
  });
  let joined = false;
  let failed = false;
  let stopping = false;
  let paused = false;

  const fatal = (err: unknown) => {
    if (stopping || failed) return;
    failed = true;
    log.error({ err }, 'wallet saga failed');
    deps.onFatal?.(err);
  };

  // Commits: the latest watermark per partition, flushed one commit at a time.
  const toCommit = new Map<number, bigint>();
  const committed = new Map<number, bigint>();
  let flushing: Promise<void> | null = null;
  let flushTimer: NodeJS.Timeout | null = null;
  const flush = async (): Promise<void> => {
    const offsets = [...toCommit]
      .filter(([p, o]) => (committed.get(p) ?? -1n) < o)
      .map(([partition, o]) => ({ topic, partition, offset: String(o) }));
    if (offsets.length === 0) return;
    try {
      await consumer.commitOffsets(offsets);
      for (const o of offsets) committed.set(o.partition, BigInt(o.offset));
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'offset commit failed; retried on the next flush');
      scheduleFlush(1000);
    }
  };
  const scheduleFlush = (delayMs = 50) => {
    if (flushTimer) return;
    flushTimer = setTimeout(() => {
      flushTimer = null;
      flushing = (flushing ?? Promise.resolve()).then(flush).finally(() => {
        flushing = null;
      });
    }, delayMs);
  };

  const scheduler = new KeyedScheduler(config.walletSaga.maxInFlight, {
    onError: (err, partition, offset) => {
      if (!stopping) log.error({ err, partition, offset: String(offset) }, 'record processing failed');
      fatal(err);
    },
    onWatermark: (partition, next) => {
      toCommit.set(partition, next);
      lag.position(topic, partition, next);
      metrics.inFlight.set(scheduler.inFlight);
      scheduleFlush();
    },
    onCapacity: () => {
      metrics.inFlight.set(scheduler.inFlight);
      if (paused && !stopping) {
        paused = false;
        consumer.resume([{ topic }]);
      }
    },
  });

  // One set of executor dependencies for every record (this runs per admitted record).
  const executor: ExecutorDeps = {
    config,
    producer,
    directory,
    client,
    metrics,
    logger: log,
    now,
    random: deps.random ?? Math.random,
    signal: abort.signal,
  };
  const run = (
    job: CallbackJob,
    partition: number,
    m: { offset: string; key: Buffer | null; value: Buffer | null },
  ) => executeJob(executor, job, { topic, partition, offset: m.offset, key: m.key, value: m.value });

  return {
    metrics,
    ready: () => joined && !failed && !stopping,
    status: () => ({ joined, failed, inFlight: scheduler.inFlight, paused }),
    idle: () => scheduler.idle(),
    async start() {
      await producer.connect();
      await consumer.connect();
      parkedBacklog.start();
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        joined = true;
        const mine = new Set<number>(e.payload.memberAssignment[topic] ?? []);
        scheduler.resetPartitions(mine);
        for (const p of [...toCommit.keys()]) if (!mine.has(p)) toCommit.delete(p);
        committed.clear();
      });
      consumer.on(consumer.events.CRASH, (e) => {
        joined = false;
        if (!e.payload.restart) fatal(e.payload.error);
      });
      // A new group starts at the beginning: bets placed before the saga's first start still get their callbacks.
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          for (const m of batch.messages) {
            if (!isRunning() || isStale() || stopping) break;
            const offset = BigInt(m.offset);
            if (scheduler.seen(batch.partition, offset)) {
              resolveOffset(m.offset);
              continue;
            }
            let job: CallbackJob | null = null;
            try {
              job = planJob(decodeWalletEvent(m.value));
            } catch (err) {
              log.warn(
                { partition: batch.partition, offset: m.offset, err: (err as Error).message },
                'undecodable record skipped',
              );
            }
            if (job === null) {
              scheduler.skip(batch.partition, offset);
              resolveOffset(m.offset);
              continue;
            }
            const key = m.key?.toString() ?? jobKey(job);
            if (!scheduler.admit(batch.partition, offset, key, () => run(job, batch.partition, m))) {
              // Backpressure: the rest of the batch is read again after resume (its offsets stay unresolved).
              paused = true;
              consumer.pause([{ topic }]);
              break;
            }
            resolveOffset(m.offset);
          }
          metrics.inFlight.set(scheduler.inFlight);
          await heartbeat();
        },
      });
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      abort.abort(new Error('wallet saga stopping'));
      // Aborted jobs reject quickly; an HTTP attempt in progress ends by its own timeout at the latest.
      await Promise.race([scheduler.idle(), new Promise((r) => setTimeout(r, 15_000).unref())]);
      if (flushTimer) {
        clearTimeout(flushTimer);
        flushTimer = null;
      }
      await flushing;
      await flush();
      await consumer.disconnect();
      await producer.disconnect();
      await Promise.all([lag.stop(), parkedBacklog.stop()]);
      client.close();
    },
  };
}
