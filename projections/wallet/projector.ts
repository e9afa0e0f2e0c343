/**
 * The wallet projector: keeps `wallet_transactions` and `wallet_balances` (migration 003) from the
 * `wallet-transactions` topic, one statement per batch with the checkpoint (projection `wallet`
 * in projection_checkpoints). Postgres holds the position: on every group join
 * (`${PROJECTOR_GROUP}-wallet`) each assigned partition is sought to its stored checkpoint (the
 * first retained offset when none), and records below it are skipped; checkpoints that could not
 * be read (Postgres away at the join) are read again on the next batch. A failed write is retried
 * with capped backoff from the same offsets, so a database outage delays the projection and never
 * skips a record. The group's Kafka offset is committed after each write, as a hint only.
 *
 * Undecodable records are logged, counted and skipped, not dead-lettered: the topic's dead-letter
 * topic belongs to the wallet-saga, whose replay script re-appends what it holds.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Config } from '../../lib/config.ts';
import { trackConsumerLag } from '../../lib/consumer-lag.ts';
import type { Sql } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import { topicName } from '../../lib/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/wallet/events.ts';
import { createProjectorMetrics, type ProjectorMetrics } from '../metrics.ts';
import { readCheckpoints } from '../rounds/store.ts';
import { projectWallet } from './projection.ts';
import { writeWallet } from './store.ts';

export const WALLET_PROJECTION = 'wallet';

export interface WalletProjector {
  /** Joins the group and starts consuming. */
  start(): Promise<void>;
  /** Stops after the write in progress and disconnects. */
  stop(): Promise<void>;
  /** Consumer in its group and the last write succeeded. */
  ready(): boolean;
  /** Records skipped because they did not decode. */
  undecodable(): number;
  readonly metrics: ProjectorMetrics;
}

/** Builds the projector; nothing connects until `start()`. */
export function buildWalletProjector(deps: {
  config: Pick<Config, 'kafka' | 'projector'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): WalletProjector {
  const { config, kafka, sql } = deps;
  const topic = topicName(config, 'walletTransactions');
  const groupId = `${config.projector.group}-wallet`;
  const log = deps.logger.child({ component: 'wallet-projector', topic, groupId });
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 500,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const admin = kafka.admin();
  const metrics = createProjectorMetrics(deps.registry);
  const labels = { projection: WALLET_PROJECTION, topic };
  const lag = trackConsumerLag({
    kafka,
    registry: metrics.registry,
    name: `projector-${WALLET_PROJECTION}`,
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    logger: log,
  });
  const checkpoints = new Map<number, bigint>();
  let alignment: Promise<boolean> = Promise.resolve(true);
  let assigned: number[] = [];
  let up = false;
  let dbOk = true;
  let stopped = false;
  let skipped = 0;

  async function align(partitions: readonly number[]): Promise<boolean> {
    try {
      const stored = await readCheckpoints(sql, WALLET_PROJECTION, topic);
      const offsets = await admin.fetchTopicOffsets(topic);
      for (const p of partitions) {
        const low = BigInt(offsets.find((o) => o.partition === p)?.low ?? 0);
        const cp = stored.get(p);
        const target = cp === undefined || cp < low ? low : cp;
        checkpoints.set(p, target);
        lag.position(topic, p, target);
        consumer.seek({ topic, partition: p, offset: String(target) });
      }
      return true;
    } catch (err) {
      dbOk = false;
      log.error({ err }, 'could not load the checkpoints; retrying on the next batch');
      return false;
    }
  }

  async function eachBatch(payload: EachBatchPayload) {
    const { batch, resolveOffset, heartbeat, isStale, commitOffsetsIfNecessary } = payload;
    const p = batch.partition;
    metrics.batchSize.observe(labels, batch.messages.length);
    if (!(await alignment)) {
      // Postgres was away at the join: load the checkpoints again instead of waiting for a rebalance.
      if (!stopped) alignment = align(assigned);
      await new Promise((r) => setTimeout(r, 500));
      return;
    }
    if (isStale()) return;
    const cp = checkpoints.get(p);
    if (cp === undefined) return;
    const fresh = batch.messages.filter((m) => BigInt(m.offset) >= cp);
    if (fresh.length === 0) {
      // Projected already (a restart reads from before the checkpoint): move past it. Returning
      // without resolving would make kafkajs fetch this same batch again, for ever.
      resolveOffset(batch.lastOffset());
      return;
    }
    const events: WalletEvent[] = [];
    for (const m of fresh) {
      try {
        events.push(decodeWalletEvent(m.value));
      } catch (err) {
        skipped += 1;
        metrics.skipped.inc(labels);
        log.error({ err, partition: p, offset: m.offset }, 'skipping an undecodable wallet record');
      }
    }
    const next = BigInt(batch.lastOffset()) + 1n;
    const { patches, balances } = projectWallet(events);
    let written = false;
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const started = performance.now();
        await writeWallet(
          sql,
          { projection: WALLET_PROJECTION, topic, partition: p },
          patches,
          balances,
          next,
        );
        metrics.txSeconds.observe(labels, (performance.now() - started) / 1000);
        dbOk = true;
        written = true;
        break;
      } catch (err) {
        dbOk = false;
        metrics.dbFailures.inc(labels);
        log.warn({ err, attempt, partition: p }, 'wallet write failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(3000, 200 * 2 ** attempt)));
        await heartbeat().catch(() => {});
      }
    }
    // Stopping between attempts leaves the batch to the next start; a write that went through is
    // still resolved and committed, so the group's offset matches the checkpoint after a stop.
    if (!written) return;
    checkpoints.set(p, next);
    metrics.projected.inc(labels, events.length);
    lag.position(topic, p, next);
    resolveOffset(batch.lastOffset());
    // Postgres holds the position; the group's offset is a hint for lag metrics and tools.
    await commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition: p, offset: String(next) }] }],
    }).catch((err: unknown) =>
      log.debug({ err, partition: p }, 'kafka offset commit failed (postgres holds the checkpoint)'),
    );
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    checkpoints.clear();
    up = true;
    assigned = e.payload.memberAssignment[topic] ?? [];
    alignment = align(assigned);
  });
  consumer.on(consumer.events.CRASH, (e) => {
    up = false;
    log.error({ err: e.payload.error }, 'consumer crashed');
  });
  consumer.on(consumer.events.STOP, () => {
    up = false;
  });

  return {
    async start() {
      await admin.connect();
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      log.info('wallet projector started');
    },
    async stop() {
      stopped = true;
      await consumer.disconnect();
      up = false;
      await Promise.allSettled([admin.disconnect(), lag.stop()]);
    },
    ready: () => up && dbOk,
    undecodable: () => skipped,
    metrics,
  };
}
