/**
 * The settlement processor (issue 5 contract, step 3): joins BetPlaced on `wallet-transactions`
 * with RoundFinished on `rounds` in one consumer group (SETTLEMENT_GROUP, `settlement`) and appends
 * BetSettled, or BetRejected{ROUND_CLOSED} (+ RollbackRequested when debited).
 *
 * It is a spec of the checkpointed consumer (lib/log/checkpointed-consumer.ts). State that survives
 * a restart is a small Postgres table set (migration 005), not a rebuild from the log: open bets
 * per (game, round_id), recent rounds per game, every bet's status (the dedupe by tx_id) and an
 * outbox, written in ONE statement with the checkpoints (projection `settlement` in
 * projection_checkpoints). A `rounds` partition without a checkpoint starts ROUNDS_LOOKBACK
 * records back, since a bet is only ever on a recent round. Events are appended after the commit
 * and leave the outbox when read back; recovery.ts re-appends at start-up only those not in the
 * log, so a SIGKILL at any point neither loses nor doubles a BetSettled. One instance at a time.
 */
import type { Kafka } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
  type ConsumerStatus,
} from '../../lib/log/checkpointed-consumer.ts';
import type { ConsumerSpec } from '../../lib/log/consumer-spec.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import type { FinishedRound } from '../../rules/bets/settle.ts';
import type { BetCashedOut } from '../../rules/rounds/round.ts';
import { settleRoundsBatch, settleWalletBatch } from './batch.ts';
import type { SettlementConfig } from './config.ts';
import { createSettlementMetrics, type SettlementMetrics } from './metrics.ts';
import { recoverOutbox } from './recovery.ts';
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
  /** Recovers the outbox, joins the group and starts consuming. @throws database or broker errors. */
  start(): Promise<void>;
  /** Stops after the batch in progress and disconnects. */
  stop(): Promise<void>;
  /** Consumer in its group, last database call succeeded, nothing being retried. */
  ready(): boolean;
  status(): ConsumerStatus;
  /** Counters in a `service="settlement"` registry with the process and consumer metrics and the consumer lag. */
  readonly metrics: SettlementMetrics;
}

/**
 * A record settlement reads: a wallet event, or of `rounds` a finished round, a BettingClosed (with
 * its broker append time) or a manual cash-out; RoundOpened is not needed (null).
 */
type Input =
  | { readonly wallet: WalletEvent; readonly appendedAt: number }
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
  const { appended, records } = metrics;
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });

  const spec: ConsumerSpec<Input> = {
    name: SETTLEMENT_PROJECTION,
    topics: ['walletTransactions', 'rounds'],
    chunkSize: Number.POSITIVE_INFINITY,
    decode: (m, topic) => {
      // The topics use LogAppendTime: the record timestamp is the broker's append time.
      const appendedAt = Number(m.timestamp);
      if (topic !== 'rounds') return { wallet: decodeWalletEvent(m.value), appendedAt };
      const e = decodeRoundEvent(m.value);
      if (e.type === 'RoundFinished') return { round: e };
      if (e.type === 'BettingClosed')
        return { closed: { game: e.game_slug, round_id: e.round_id, closed_at: appendedAt } };
      if (e.type === 'BetCashedOut') return { cashOut: e };
      return null;
    },
    initialOffset: (topic, low, high) =>
      topic === 'rounds' && high - ROUNDS_LOOKBACK > low ? high - ROUNDS_LOOKBACK : low,
    async write(pool, key, inputs, next) {
      const present = inputs.filter((i) => i !== null);
      const emitted =
        key.topicKey === 'rounds'
          ? await settleRoundsBatch(
              pool,
              key,
              {
                finished: present.flatMap((i) => ('round' in i ? [i.round] : [])),
                closes: present.flatMap((i) => ('closed' in i ? [i.closed] : [])),
                cashOuts: present.flatMap((i) => ('cashOut' in i ? [i.cashOut] : [])),
              },
              next,
              now(),
            )
          : await settleWalletBatch(
              pool,
              key,
              present.flatMap((i) => ('wallet' in i ? [{ event: i.wallet, appendedAt: i.appendedAt }] : [])),
              next,
              now(),
            );
      let counted = false;
      return {
        checkpoint: next,
        async afterCommit() {
          if (!counted) records.inc({ topic: key.topic, result: 'processed' }, inputs.length);
          counted = true;
          if (emitted.length === 0) return;
          // Retried until the broker takes it; a stop in between leaves the outbox to recovery.ts.
          await producer.send({
            topic: walletTopic,
            acks: -1,
            messages: emitted.map((e) => ({ key: e.key, value: e.value })),
          });
          for (const e of emitted)
            appended.inc({
              type: e.event.type,
              outcome: e.event.type === 'BetSettled' ? e.event.value.outcome : '',
            });
        },
      };
    },
  };
  const consumer: CheckpointedConsumer = buildCheckpointedConsumer(spec, {
    config,
    kafka,
    sql,
    logger: deps.logger,
    groupId: config.settlement.group,
    maxWaitTimeInMs: 500,
    commitOffsets: true,
    lagName: 'settlement',
    options: { registry: metrics.registry },
  });

  return {
    metrics,
    async start() {
      await producer.connect();
      await recoverOutbox({ sql, kafka, producer, walletTopic, log });
      await consumer.start();
      log.info('settlement started');
    },
    async stop() {
      await consumer.stop();
      await producer.disconnect().catch(() => {});
      log.info('settlement stopped');
    },
    ready: consumer.ready,
    status: consumer.status,
  };
}
