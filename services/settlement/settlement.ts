/**
 * The settlement processor (issue 5 contract, step 3): joins BetPlaced on `wallet-transactions`
 * with RoundFinished on `rounds` in one consumer group (SETTLEMENT_GROUP, `settlement`) and appends
 * BetSettled, or BetRejected{ROUND_CLOSED} (+ RollbackRequested when debited).
 *
 * State that survives a restart is a small Postgres table set (migration 005), not a rebuild from
 * the log: open bets per (game, round_id), recent rounds per game, every bet's status (the dedupe
 * by tx_id) and an outbox, written in ONE statement with the checkpoints (projection
 * `settlement` in projection_checkpoints). Postgres holds the position: on every group join each
 * partition is sought to its checkpoint (rounds without one: the last ROUNDS_LOOKBACK records, since
 * a bet is only ever on a recent round). Events are appended after the commit and leave the outbox
 * when read back; recovery.ts re-appends at start-up only those not in the log, so a SIGKILL at any
 * point neither loses nor doubles a BetSettled. One instance at a time; one batch at a time.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import pRetry from 'p-retry';
import type { Config } from '../../lib/config.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { trackConsumerLag } from '../../lib/log/consumer-lag.ts';
import { topicName } from '../../lib/log/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import type { FinishedRound } from '../../rules/bets/settle.ts';
import type { Emitted } from '../../rules/bets/step.ts';
import { decodeRound } from '../../rules/rounds/round.ts';
import { readCheckpoints } from '../projector/rounds/store.ts';
import { settleRoundsBatch, settleWalletBatch } from './batch.ts';
import { createSettlementMetrics, type SettlementMetrics } from './metrics.ts';
import { recoverOutbox } from './recovery.ts';
import { SETTLEMENT_PROJECTION } from './store.ts';

/** Records of `rounds` read back on a partition without a checkpoint. */
export const ROUNDS_LOOKBACK = 10_000n;

export interface SettlementDeps {
  readonly config: Pick<Config, 'kafka' | 'settlement'>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly logger: Logger;
  /** Clock for the `at` of appended events (Unix ms); Date.now by default. */
  readonly now?: () => number;
}

export interface Settlement {
  /** Recovers the outbox, joins the group and starts consuming. @throws database or broker errors. */
  start(): Promise<void>;
  /** Stops after the batch in progress and disconnects. */
  stop(): Promise<void>;
  /** Consumer in its group and last database call succeeded. */
  ready(): boolean;
  status(): { consumer: boolean; database: boolean };
  /** Counters in a `service="settlement"` registry with the process metrics and the consumer lag. */
  readonly metrics: SettlementMetrics;
}

/** Builds the processor; nothing connects until `start()`. */
export function buildSettlement(deps: SettlementDeps): Settlement {
  const { config, kafka, sql } = deps;
  const now = deps.now ?? Date.now;
  const walletTopic = topicName(config, 'walletTransactions');
  const roundsTopic = topicName(config, 'rounds');
  const groupId = config.settlement.group;
  const log = deps.logger.child({ component: 'settlement', groupId });
  const metrics = createSettlementMetrics(createServiceRegistry('settlement'));
  const { registry, appended, records } = metrics;
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 500,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const admin = kafka.admin();
  const lag = trackConsumerLag({
    kafka,
    registry,
    name: 'settlement',
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    logger: log,
  });
  const checkpoints = new Map<string, bigint>();
  const tp = (topic: string, p: number) => `${topic}:${p}`;
  let alignment: Promise<boolean> = Promise.resolve(true);
  let assignment: Record<string, number[]> = {};
  let consumerUp = false;
  let dbUp = true;
  /** Aborted by stop(): retries end and the batch in progress returns without committing. */
  const stopping = new AbortController();

  async function align(assignment: Record<string, number[]>): Promise<boolean> {
    try {
      for (const topic of [walletTopic, roundsTopic]) {
        const parts = assignment[topic] ?? [];
        if (parts.length === 0) continue;
        const stored = await readCheckpoints(sql, SETTLEMENT_PROJECTION, topic);
        const offsets = await admin.fetchTopicOffsets(topic);
        for (const p of parts) {
          const o = offsets.find((x) => x.partition === p);
          const low = BigInt(o?.low ?? 0);
          const high = BigInt(o?.high ?? 0);
          const fallback =
            topic === roundsTopic && high - ROUNDS_LOOKBACK > low ? high - ROUNDS_LOOKBACK : low;
          const cp = stored.get(p);
          const target = cp === undefined || cp < low ? fallback : cp;
          checkpoints.set(tp(topic, p), target);
          lag.position(topic, p, target);
          consumer.seek({ topic, partition: p, offset: String(target) });
        }
      }
      dbUp = true;
      return true;
    } catch (err) {
      dbUp = false;
      log.error({ err }, 'could not load the checkpoints; retrying on the next batch');
      return false;
    }
  }

  function decodeAll<T>(
    topic: string,
    msgs: EachBatchPayload['batch']['messages'],
    f: (v: Buffer | null) => T,
  ): T[] {
    const out: T[] = [];
    for (const m of msgs) {
      try {
        out.push(f(m.value));
      } catch (err) {
        records.inc({ topic, result: 'undecodable' });
        log.warn({ err, topic, offset: m.offset }, 'skipping an undecodable record');
      }
    }
    return out;
  }

  function processOnce(
    topic: string,
    partition: number,
    decoded: unknown[],
    next: bigint,
  ): Promise<Emitted[]> {
    const key = { projection: SETTLEMENT_PROJECTION, topic, partition };
    return topic === walletTopic
      ? settleWalletBatch(sql, key, decoded as WalletEvent[], next, now())
      : settleRoundsBatch(sql, key, decoded as FinishedRound[], next, now());
  }

  /**
   * Retries `f` (p-retry) with backoff from 200 ms doubling to 3 s until it succeeds, heartbeating
   * between attempts. @returns undefined when the processor stops first.
   */
  async function retrying<T>(
    what: string,
    f: () => Promise<T>,
    heartbeat: () => Promise<void>,
  ): Promise<T | undefined> {
    if (stopping.signal.aborted) return undefined; // p-retry watches only a signal not yet aborted
    try {
      return await pRetry(f, {
        // `forever` keeps retrying at the capped delay once `retries` are used.
        retries: 10,
        forever: true,
        minTimeout: 200,
        maxTimeout: 3000,
        factor: 2,
        randomize: false,
        signal: stopping.signal,
        onFailedAttempt: async (err) => {
          if (what !== 'append') dbUp = false;
          log.warn({ err, attempt: err.attemptNumber }, `${what} failed; retrying`);
          await heartbeat().catch(() => {});
        },
      });
    } catch (err) {
      if (stopping.signal.aborted) return undefined;
      throw err;
    }
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isStale, commitOffsetsIfNecessary } = payload;
    const { topic, partition } = batch;
    if (!(await alignment)) {
      // Postgres was away at the join: load the checkpoints again instead of waiting for a rebalance.
      if (!stopping.signal.aborted) alignment = align(assignment);
      await new Promise((r) => setTimeout(r, 500));
      return;
    }
    if (isStale()) return;
    const cp = checkpoints.get(tp(topic, partition));
    if (cp === undefined) return;
    const fresh = batch.messages.filter((m) => BigInt(m.offset) >= cp);
    records.inc({ topic, result: 'skipped' }, batch.messages.length - fresh.length);
    if (fresh.length === 0) {
      // Processed already (read from before the checkpoint): move past it. Returning
      // without resolving would make kafkajs fetch this same batch again, for ever.
      resolveOffset(batch.lastOffset());
      return;
    }
    const decoded: unknown[] =
      topic === walletTopic
        ? decodeAll(topic, fresh, decodeWalletEvent)
        : decodeAll(topic, fresh, decodeRound);
    const next = BigInt(batch.lastOffset()) + 1n;
    const emitted = await retrying(
      'settlement write',
      () => processOnce(topic, partition, decoded, next),
      heartbeat,
    );
    if (emitted === undefined) return;
    dbUp = true;
    checkpoints.set(tp(topic, partition), next);
    lag.position(topic, partition, next);
    records.inc({ topic, result: 'processed' }, fresh.length);
    if (emitted.length > 0) {
      const messages = emitted.map((e) => ({ key: e.key, value: e.value }));
      const sent = await retrying(
        'append',
        () => producer.send({ topic: walletTopic, acks: -1, messages }),
        heartbeat,
      );
      if (sent === undefined) return; // stopping: the outbox keeps them for the next start
      for (const e of emitted)
        appended.inc({
          type: e.event.type,
          outcome: e.event.type === 'BetSettled' ? e.event.value.outcome : '',
        });
    }
    resolveOffset(batch.lastOffset());
    await commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition, offset: String(next) }] }],
    }).catch((err: unknown) =>
      log.debug({ err }, 'kafka offset commit failed (postgres holds the checkpoint)'),
    );
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    checkpoints.clear();
    consumerUp = true;
    assignment = e.payload.memberAssignment;
    alignment = align(assignment);
    log.info({ assignment: e.payload.memberAssignment }, 'joined the group');
  });
  consumer.on(consumer.events.CRASH, (e) => {
    consumerUp = false;
    log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
  });
  consumer.on(consumer.events.STOP, () => {
    consumerUp = false;
  });

  return {
    metrics,
    async start() {
      await Promise.all([admin.connect(), producer.connect()]);
      await recoverOutbox({ sql, kafka, producer, walletTopic, log });
      await consumer.connect();
      await consumer.subscribe({ topics: [walletTopic, roundsTopic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      log.info('settlement started');
    },
    async stop() {
      stopping.abort(new Error('settlement stopping'));
      await consumer.disconnect();
      consumerUp = false;
      await Promise.allSettled([producer.disconnect(), admin.disconnect(), lag.stop()]);
      log.info('settlement stopped');
    },
    ready: () => consumerUp && dbUp,
    status: () => ({ consumer: consumerUp, database: dbUp }),
  };
}
