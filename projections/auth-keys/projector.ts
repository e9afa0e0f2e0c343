/**
 * The auth-keys projector: keeps the `api_keys` read model (migration 002) from the compacted
 * `auth-keys` topic, one statement per batch with the checkpoint (DESIGN.md "checkpoint written in
 * the same transaction as the rows it covers"). Postgres holds the position: every start reads the
 * (small, compacted) topic from the beginning with a fresh group and skips records below the stored
 * checkpoint, so a rebuilt (emptied) read model is replayed in full. A failed write is retried with capped
 * backoff from the same offsets. Undecodable records are logged and skipped (the topic is written
 * only by the API). The topic is tiny, so this stays far simpler than the rounds projector.
 */
import { randomUUID } from 'node:crypto';
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import { decodeKeyEvent, type KeyEvent } from '../../lib/auth/key-events.ts';
import type { Config } from '../../lib/config.ts';
import { trackConsumerLag } from '../../lib/consumer-lag.ts';
import type { Sql } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import { topicName } from '../../lib/topics.ts';
import { createProjectorMetrics, type ProjectorMetrics } from '../metrics.ts';
import { readCheckpoints } from '../rounds/store.ts';
import { foldKeyEvents } from './projection.ts';
import { writeKeyPatches } from './store.ts';

export const AUTH_KEYS_PROJECTION = 'auth-keys';

export interface AuthKeysProjector {
  /** Loads the checkpoints, joins and starts consuming. */
  start(): Promise<void>;
  /** Stops after the write in progress and disconnects. */
  stop(): Promise<void>;
  /** Consumer in its group and the last write succeeded. */
  ready(): boolean;
  readonly metrics: ProjectorMetrics;
}

/** Builds the projector; its group is `${PROJECTOR_GROUP}-auth-keys-<uuid>`. */
export function buildAuthKeysProjector(deps: {
  config: Pick<Config, 'kafka' | 'projector'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): AuthKeysProjector {
  const { config, kafka, sql } = deps;
  const topic = topicName(config, 'authKeys');
  // A group of its own per start, committing nothing: a restart right after a crash cannot wait
  // for the dead member's session to expire, and Postgres holds the position anyway.
  const groupId = `${config.projector.group}-auth-keys-${randomUUID()}`;
  const log = deps.logger.child({ component: 'auth-keys-projector', topic, groupId });
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 500,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const metrics = createProjectorMetrics(deps.registry);
  const labels = { projection: AUTH_KEYS_PROJECTION, topic };
  const lag = trackConsumerLag({
    kafka,
    registry: metrics.registry,
    name: `projector-${AUTH_KEYS_PROJECTION}`,
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    logger: log,
  });
  let checkpoints = new Map<number, bigint>();
  let stopped = false;
  let joined = false;
  let dbOk = true;

  async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload) {
    const p = batch.partition;
    metrics.batchSize.observe(labels, batch.messages.length);
    const cp = checkpoints.get(p) ?? 0n;
    const fresh = batch.messages.filter((m) => BigInt(m.offset) >= cp);
    if (fresh.length === 0) {
      // Projected already (a restart reads from before the checkpoint): move past it. Returning
      // without resolving would make kafkajs fetch this same batch again, for ever.
      resolveOffset(batch.lastOffset());
      return;
    }
    const events: KeyEvent[] = [];
    for (const m of fresh) {
      try {
        events.push(decodeKeyEvent(m.key, m.value));
      } catch (err) {
        metrics.skipped.inc(labels);
        log.error({ err, partition: p, offset: m.offset }, 'skipping undecodable auth-keys record');
      }
    }
    const next = BigInt(batch.lastOffset()) + 1n;
    const patches = foldKeyEvents(events);
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const started = performance.now();
        await writeKeyPatches(sql, { projection: AUTH_KEYS_PROJECTION, topic, partition: p }, patches, next);
        metrics.txSeconds.observe(labels, (performance.now() - started) / 1000);
        dbOk = true;
        break;
      } catch (err) {
        dbOk = false;
        metrics.dbFailures.inc(labels);
        log.warn({ err, attempt, partition: p }, 'auth-keys write failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(3000, 200 * 2 ** attempt)));
        await heartbeat();
      }
    }
    if (stopped) return;
    checkpoints.set(p, next);
    metrics.projected.inc(labels, events.length);
    lag.position(topic, p, next);
    resolveOffset(batch.lastOffset());
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joined = true;
    // Nothing to read on a partition is as good as caught up with its checkpoint (or its start).
    for (const p of e.payload.memberAssignment[topic] ?? []) {
      const cp = checkpoints.get(p);
      if (cp !== undefined) lag.position(topic, p, cp);
    }
  });
  consumer.on(consumer.events.CRASH, () => {
    joined = false;
  });
  consumer.on(consumer.events.STOP, () => {
    joined = false;
  });

  return {
    async start() {
      checkpoints = await readCheckpoints(sql, AUTH_KEYS_PROJECTION, topic);
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      log.info('auth-keys projector started');
    },
    async stop() {
      stopped = true;
      await consumer.disconnect();
      await lag.stop();
    },
    ready: () => joined && dbOk,
    metrics,
  };
}
