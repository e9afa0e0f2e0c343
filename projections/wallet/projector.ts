/**
 * The wallet projector: keeps `wallet_transactions` and `wallet_balances` (migration 003) from the
 * `wallet-transactions` topic, one statement per batch with the checkpoint (projection `wallet`
 * in projection_checkpoints). Postgres holds the position: on every group join
 * (`${PROJECTOR_GROUP}-wallet`) each assigned partition is sought to its stored checkpoint (the
 * first retained offset when none), and records below it are skipped. A failed write is retried
 * with capped backoff from the same offsets, so a database outage delays the projection and never
 * skips a record.
 *
 * Undecodable records are logged, counted and skipped, not dead-lettered: the topic's dead-letter
 * topic belongs to the wallet-saga, whose replay script re-appends what it holds.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import type { Sql } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import { topicName } from '../../lib/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/wallet/events.ts';
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
}

/** Builds the projector; nothing connects until `start()`. */
export function buildWalletProjector(deps: {
  config: Pick<Config, 'kafka' | 'projector'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
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
  const checkpoints = new Map<number, bigint>();
  let alignment: Promise<boolean> = Promise.resolve(true);
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
        consumer.seek({ topic, partition: p, offset: String(target) });
      }
      return true;
    } catch (err) {
      log.error({ err }, 'could not load the checkpoints');
      return false;
    }
  }

  async function eachBatch({ batch, resolveOffset, heartbeat, isStale }: EachBatchPayload) {
    const p = batch.partition;
    if (!(await alignment) || isStale()) return;
    const cp = checkpoints.get(p);
    if (cp === undefined) return;
    const fresh = batch.messages.filter((m) => BigInt(m.offset) >= cp);
    if (fresh.length === 0) return;
    const events: WalletEvent[] = [];
    for (const m of fresh) {
      try {
        events.push(decodeWalletEvent(m.value));
      } catch (err) {
        skipped += 1;
        log.error({ err, partition: p, offset: m.offset }, 'skipping an undecodable wallet record');
      }
    }
    const next = BigInt(batch.lastOffset()) + 1n;
    const { patches, balances } = projectWallet(events);
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await writeWallet(
          sql,
          { projection: WALLET_PROJECTION, topic, partition: p },
          patches,
          balances,
          next,
        );
        dbOk = true;
        break;
      } catch (err) {
        dbOk = false;
        log.warn({ err, attempt, partition: p }, 'wallet write failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(3000, 200 * 2 ** attempt)));
        await heartbeat().catch(() => {});
      }
    }
    if (stopped) return;
    checkpoints.set(p, next);
    resolveOffset(batch.lastOffset());
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    checkpoints.clear();
    up = true;
    alignment = align(e.payload.memberAssignment[topic] ?? []);
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
      await admin.disconnect().catch(() => {});
    },
    ready: () => up && dbOk,
    undecodable: () => skipped,
  };
}
