/**
 * The settlement processor: joins BetPlaced on
 * `wallet-transactions` with RoundFinished on `rounds` and appends BetSettled, or
 * BetRejected{ROUND_CLOSED} (the rollback of a debited one is the bet's process manager's,
 * rules/wallet/process.ts). Any number of instances run side
 * by side (docs/decisions/money/0005-settlement-scale-out.md):
 *
 * - wallet-transactions is shared through the consumer group SETTLEMENT_GROUP (`settlement`): each
 *   instance settles only the bets of the wallet partitions it has, and claims them in Postgres on
 *   every assignment (ownership.ts: an epoch per partition that fences a stale owner's decisions and
 *   appends), recovers their outbox and settles their bets whose round is already known
 *   (handover.ts);
 * - every instance reads all of `rounds` itself (a consumer group of its own per start, no commits):
 *   it keeps the rounds, closes and cash-outs (idempotent inserts, shared by all instances) and
 *   settles the open bets of its own wallet partitions. Its checkpoint per rounds partition is
 *   shared by the instances and only moves forward, so it is the position of the instance furthest
 *   on: everything below it is stored. A (re)starting reader begins there and sweeps its partitions
 *   for the rounds it skipped. A partition without a checkpoint starts ROUNDS_LOOKBACK records back.
 *
 * Both are specs of the checkpointed consumer (lib/log/checkpointed-consumer.ts). State that
 * survives a restart is a small Postgres table set (migrations 005, 007, 009): open bets, recent
 * rounds, every bet's status (the dedupe by tx_id) and an outbox, written in ONE transaction with
 * the checkpoint (projection `settlement` in projection_checkpoints). Events are appended after the
 * commit and leave the outbox when read back; a SIGKILL at any point neither loses nor doubles a
 * BetSettled, and neither does a partition moving to another instance.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kafka } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
  type ConsumerStatus,
} from '../../lib/log/checkpointed-consumer.ts';
import type { ConsumerSpec, Written } from '../../lib/log/consumer-spec.ts';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { decodeWalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import type { FinishedRound } from '../../rules/bets/settle.ts';
import { admitByTime, REFUSAL_REASONS } from '../../rules/rounds/admission.ts';
import type { BetCashedOut } from '../../rules/rounds/round.ts';
import { retryStale, settleRoundsBatch, settleWalletBatch } from './batch.ts';
import type { SettlementConfig } from './config.ts';
import { StaleOwnerError } from './errors.ts';
import { createHandover } from './handover.ts';
import { createSettlementMetrics, type SettlementMetrics } from './metrics.ts';
import { backfillPartitions, createOwnership, type Sendable } from './ownership.ts';
import type { TimedWalletEvent } from './step.ts';
import { type CloseRow, SETTLEMENT_PROJECTION } from './store.ts';

/** Records of `rounds` read back on a partition without a checkpoint. */
export const ROUNDS_LOOKBACK = 10_000n;

export interface SettlementDeps {
  readonly config: Pick<SettlementConfig, 'kafka' | 'settlement' | 'db'>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly logger: Logger;
  /** Clock for the `at` of appended events (Unix ms); Date.now by default. */
  readonly now?: () => number;
}

export interface Settlement {
  /** Joins the group, starts consuming both topics; resolves once running. @throws database or broker errors. */
  start(): Promise<void>;
  /** Stops after the batches in progress and disconnects. */
  stop(): Promise<void>;
  /** Both consumers in their groups, last database calls succeeded, nothing being retried. */
  ready(): boolean;
  status(): ConsumerStatus;
  /** Counters in a `service="settlement"` registry with the process and consumer metrics and the consumer lag. */
  readonly metrics: SettlementMetrics;
  /** The wallet-transactions partitions this instance settles now. */
  partitions(): number[];
}

/**
 * A record of `rounds` settlement reads: a finished round, a BettingClosed (with its broker append
 * time) or a manual cash-out; RoundOpened is not needed (null).
 */
type RoundInput =
  | { readonly round: FinishedRound }
  | { readonly closed: CloseRow }
  | { readonly cashOut: BetCashedOut }
  | null;

/** Builds the processor; nothing connects until `start()`. */
export function buildSettlement(deps: SettlementDeps): Settlement {
  const { config, kafka, sql } = deps;
  const now = deps.now ?? Date.now;
  const walletTopic = topicName(config, 'walletTransactions');
  const log = deps.logger.child({ component: 'settlement', groupId: config.settlement.group });
  const metrics = createSettlementMetrics(createServiceRegistry('settlement'));
  for (const reason of REFUSAL_REASONS) metrics.refused.inc({ reason }, 0);
  const { appended, records } = metrics;
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const ownership = createOwnership(`${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`);
  const count = (sent: readonly Sendable[]) => {
    for (const e of sent)
      if (e.event)
        appended.inc({
          type: e.event.type,
          outcome: e.event.type === 'BetSettled' ? e.event.value.outcome : '',
        });
  };
  const handover = createHandover({ kafka, producer, walletTopic, log, ownership, now, onAppended: count });

  /**
   * A committed write: counts its records, then appends what it decided through the fence (on the
   * caller's pool: the consumer's gate may end a pool it replaced before this runs).
   */
  const written = (topic: string, n: number, decided: Sendable[], next: bigint): Written => {
    let counted = false;
    return {
      checkpoint: next,
      async afterCommit() {
        if (!counted) records.inc({ topic, result: 'processed' }, n);
        counted = true;
        // Retried until the broker takes it; a stop in between leaves the outbox to the recovery.
        await handover.send(sql, decided);
      },
    };
  };

  const walletSpec: ConsumerSpec<TimedWalletEvent> = {
    name: SETTLEMENT_PROJECTION,
    topics: ['walletTransactions'],
    chunkSize: Number.POSITIVE_INFINITY,
    // The topics use LogAppendTime: the record timestamp is the broker's append time.
    decode: (m) => ({ event: decodeWalletEvent(m.value), appendedAt: Number(m.timestamp) }),
    assigned: (pool, _topic, partitions) => handover.assigned(pool, partitions),
    async write(pool, key, events, next) {
      const decided = await retryStale(
        ownership,
        () => {
          const epoch = ownership.epochs().get(key.partition);
          if (epoch === undefined) throw new StaleOwnerError(new Map([[key.partition, -1n]]));
          return settleWalletBatch(pool, key, events, next, now(), epoch);
        },
        // The group gave us this partition (its batch is here): claim it again.
        (stale) => handover.claim(pool, [...stale.keys()]),
      );
      return written(key.topic, events.length, decided, next);
    },
  };

  const roundsSpec: ConsumerSpec<RoundInput> = {
    name: SETTLEMENT_PROJECTION,
    topics: ['rounds'],
    chunkSize: Number.POSITIVE_INFINITY,
    decode: (m) => {
      const e = decodeRoundEvent(m.value);
      if (e.type === 'RoundFinished') {
        // A round from the future or the past settles nothing (rules/rounds/admission.ts): it would
        // settle the bets of its id with its result and, stored, move the pruning's newest round.
        const a = admitByTime(e, Number(m.timestamp));
        if (a.admitted) return { round: e };
        metrics.refused.inc({ reason: a.reason });
        log.warn(
          { round_id: e.round_id, offset: m.offset, reason: a.reason, detail: a.detail },
          'round refused',
        );
        return null;
      }
      if (e.type === 'BettingClosed')
        return { closed: { game: e.game_slug, round_id: e.round_id, closed_at: Number(m.timestamp) } };
      if (e.type === 'BetCashedOut') return { cashOut: e };
      return null;
    },
    initialOffset: (_topic, low, high) => (high - ROUNDS_LOOKBACK > low ? high - ROUNDS_LOOKBACK : low),
    // The reader may have started past rounds it never read (another instance stored them).
    assigned: (pool) => handover.sweepOwned(pool),
    async write(pool, key, inputs, next) {
      const present = inputs.filter((i) => i !== null);
      const input = {
        finished: present.flatMap((i) => ('round' in i ? [i.round] : [])),
        closes: present.flatMap((i) => ('closed' in i ? [i.closed] : [])),
        cashOuts: present.flatMap((i) => ('cashOut' in i ? [i.cashOut] : [])),
      };
      const decided = await retryStale(
        ownership,
        () =>
          settleRoundsBatch(pool, key, input, next, now(), new Map(ownership.epochs()), (reason) =>
            metrics.refused.inc({ reason }),
          ),
        async (stale) => ownership.release(stale),
      );
      return written(key.topic, inputs.length, decided, next);
    },
  };

  const consumerDeps = {
    config,
    kafka,
    sql,
    logger: deps.logger,
    maxWaitTimeInMs: 500,
    lagName: 'settlement',
    options: { registry: metrics.registry },
  };
  const consumers: CheckpointedConsumer[] = [
    buildCheckpointedConsumer(walletSpec, {
      ...consumerDeps,
      groupId: config.settlement.group,
      commitOffsets: true,
    }),
    buildCheckpointedConsumer(roundsSpec, {
      ...consumerDeps,
      groupId: `${config.settlement.group}-rounds-${randomUUID()}`,
      commitOffsets: false,
    }),
  ];

  return {
    metrics,
    async start() {
      await producer.connect();
      const filled = await backfillPartitions(
        sql,
        async () => (await partitionOffsets(kafka, walletTopic)).size,
      );
      if (filled > 0)
        log.info({ rows: filled }, 'wallet partitions filled in on rows from before migration 009');
      for (const c of consumers) await c.start();
      log.info({ owner: ownership.owner }, 'settlement started');
    },
    async stop() {
      await Promise.all(consumers.map((c) => c.stop()));
      await producer.disconnect().catch(() => {});
      log.info('settlement stopped');
    },
    ready: () => consumers.every((c) => c.ready()),
    status() {
      const all = consumers.map((c) => c.status());
      const waiting = all.flatMap((s) => (s.waiting ? [s.waiting] : []));
      return {
        consumer: all.every((s) => s.consumer),
        database: all.every((s) => s.database),
        ...(waiting.length > 0 ? { waiting: waiting.join('; ') } : {}),
      };
    },
    partitions: () => [...ownership.epochs().keys()].sort((a, b) => a - b),
  };
}
