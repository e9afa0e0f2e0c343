/**
 * The consumer side shared by the projector process's projections (rounds, auth-keys, wallet):
 * keeps a read model from its topic with exactly-once effect (DESIGN.md "Postgres holds read
 * models …"), writing through the projection's spec (projection-spec.ts).
 *
 * Postgres, not Kafka, holds the position. On every partition assignment the consumer seeks to
 * the stored checkpoint (forward past what is projected, or back when Kafka's committed offset is
 * ahead of a rebuilt read model; the first retained offset when there is none). Per Kafka batch,
 * records below the checkpoint are skipped, the rest decoded, undecodable ones handed to
 * `onUndecodable` (logged and skipped by default), and the decoded ones written in chunks, each ONE
 * atomic statement holding its rows and the checkpoint. The Kafka commit after each write is only
 * a hint (lag, faster restarts). A failed write is retried with capped backoff from the same
 * offsets through the database gate (db-gate.ts), so a database outage delays the projection and
 * never skips a record.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import {
  consumerLag,
  createProjectorMetrics,
  type ProjectorMetrics,
} from '../../services/projector/metrics.ts';
import { readCheckpoints } from '../../services/projector/rounds/store.ts';
import type { Config } from '../config.ts';
import { ABORTED, createDbGate } from '../db/gate.ts';
import { createSql, type Sql } from '../db/pool.ts';
import type { Logger } from '../logger.ts';
import { trackConsumerLag } from './consumer-lag.ts';
import { chunksOf, fromOffset, type ProjectionSpec, type Undecodable } from './projection-spec.ts';
import { topicName } from './topics.ts';

export interface ProjectorOptions {
  /** Backoff of a failed write: first and longest wait in ms (200, 3000); retried until it succeeds. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** When no database call succeeded for this long (ms), a `select 1` probe keeps readiness honest (2000). */
  readonly probeIntervalMs?: number;
  /** Registry for the metrics, shared with the process's other projections (a new one by default). */
  readonly registry?: Registry;
}

export interface LiveProjectorDeps {
  readonly config: Pick<Config, 'kafka' | 'db'>;
  readonly kafka: Kafka;
  /** The pool to start with; after a connection failure the projector uses pools of its own (see db-gate.ts). */
  readonly sql: Sql;
  readonly logger: Logger;
  readonly groupId: string;
  /** Longest wait of a fetch for new records, ms. */
  readonly maxWaitTimeInMs: number;
  /** Commit the group's offset after each write, as a hint (false: a throw-away group per start). */
  readonly commitOffsets: boolean;
  /** What happens to records that did not decode (default: logged, counted as skipped). */
  readonly onUndecodable?: (undecodable: readonly Undecodable[], partition: number) => Promise<void>;
  readonly options?: ProjectorOptions;
}

export interface Projector {
  /** Connects, joins its group and starts consuming; resolves once running. */
  start(): Promise<void>;
  /** Stops consuming after the write in progress, disconnects the Kafka clients, ends its own pools (not `sql`). */
  stop(): Promise<void>;
  /** True while the consumer is in its group and the last database call succeeded. */
  ready(): boolean;
  /** Both halves of `ready()`, for the /ready body. */
  status(): { consumer: boolean; database: boolean };
  /** High-water mark minus the group's committed offset, per partition (records). */
  lag(): Promise<Map<number, bigint>>;
  readonly metrics: ProjectorMetrics;
}

const big = (v: string | number | null | undefined, fallback = 0n) =>
  v === null || v === undefined ? fallback : BigInt(v);

/** Builds the projector of `spec`; nothing connects until `start()`. */
export function buildLiveProjector<E>(spec: ProjectionSpec<E>, deps: LiveProjectorDeps): Projector {
  const { config, kafka, groupId } = deps;
  const opts = deps.options ?? {};
  const topic = topicName(config, spec.topic);
  const log = deps.logger.child({ component: `${spec.name}-projector`, topic, groupId });
  // A member killed without leaving holds its partitions until its session expires, and a
  // restarted projector waits that long to rejoin: 10 s instead of kafkajs' 30 s. Heartbeats also
  // go out between database retries, whose wait is capped below that (retryMaxMs).
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: deps.maxWaitTimeInMs,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const admin = kafka.admin();
  const abort = new AbortController();
  const metrics = createProjectorMetrics(opts.registry);
  const labels = { projection: spec.name, topic };
  const lagGauge = trackConsumerLag({
    kafka,
    registry: metrics.registry,
    name: `projector-${spec.name}`,
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    logger: log,
  });
  const db = createDbGate({
    sql: deps.sql,
    newPool: () => createSql(config, { max: 3 }),
    log,
    signal: abort.signal,
    retryMinMs: opts.retryMinMs ?? 200,
    retryMaxMs: opts.retryMaxMs ?? 3000,
    probeIntervalMs: opts.probeIntervalMs ?? 2000,
    onFailure: () => metrics.dbFailures.inc(labels),
  });
  const onUndecodable =
    deps.onUndecodable ??
    (async (undecodable: readonly Undecodable[], partition: number) => {
      metrics.skipped.inc(labels, undecodable.length);
      for (const u of undecodable)
        log.error(
          { partition, offset: u.message.offset, reason: u.reason },
          'skipping an undecodable record',
        );
    });
  /** Next offset to read per assigned partition, as stored in Postgres; reloaded on every assignment. */
  const checkpoints = new Map<number, bigint>();
  let consumerUp = false;
  let generation = 0;
  let assigned: number[] = [];
  /** Settles true once the current assignment's positions match Postgres. */
  let alignment: Promise<boolean> = Promise.resolve(true);

  /** Loads the checkpoints of `partitions` and seeks every partition whose Kafka position differs. */
  async function align(partitions: readonly number[], gen: number): Promise<boolean> {
    if (partitions.length === 0) return true;
    try {
      const stored = await db.run({ step: 'read checkpoints' }, (pool) =>
        readCheckpoints(pool, spec.name, topic),
      );
      if (stored === ABORTED || gen !== generation) return false;
      const [committed, offsets] = await Promise.all([
        admin.fetchOffsets({ groupId, topics: [topic] }),
        admin.fetchTopicOffsets(topic),
      ]);
      if (gen !== generation) return false;
      for (const p of partitions) {
        const low = big(offsets.find((o) => o.partition === p)?.low);
        const cp = stored.get(p) ?? 0n;
        const target = cp > low ? cp : low; // never below the first retained offset
        const c = big(committed[0]?.partitions.find((x) => x.partition === p)?.offset, -1n);
        const position = c < 0n ? low : c; // no commit yet: fromBeginning
        checkpoints.set(p, cp);
        lagGauge.position(topic, p, target);
        if (position === target) continue;
        if (position > target)
          log.warn({ partition: p, position, target }, 'kafka is ahead of postgres; seeking back');
        else log.info({ partition: p, position, target }, 'seeking to the postgres checkpoint');
        consumer.seek({ topic, partition: p, offset: String(target) });
      }
      return true;
    } catch (err) {
      log.error({ err }, 'could not align the assignment with postgres; retrying on the next batch');
      return false;
    }
  }

  /** Waits for the alignment, heartbeating so a slow database does not cost the group membership. */
  async function awaitAlignment(heartbeat: () => Promise<void>): Promise<boolean> {
    let settled: boolean | undefined;
    const done = alignment.then((ok) => {
      settled = ok;
    });
    while (settled === undefined && !abort.signal.aborted) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 1000)))]);
      clearTimeout(timer); // runs per batch: no second of pending timer left behind each time
      if (settled === undefined) await heartbeat();
    }
    if (settled === false && !abort.signal.aborted) alignment = align(assigned, generation);
    return settled === true;
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
    const partition = batch.partition;
    metrics.batchSize.observe(labels, batch.messages.length);
    if (!(await awaitAlignment(heartbeat)) || isStale()) return; // a seek re-fetches from the checkpoint
    let cp = checkpoints.get(partition);
    if (cp === undefined) return;
    const end = BigInt(batch.lastOffset()) + 1n;
    if (end <= cp) {
      resolveOffset(batch.lastOffset()); // all projected already; move on without a write
      return;
    }
    const key = { projection: spec.name, topic, partition };
    for (const slice of chunksOf(batch.messages, spec.chunkSize, end)) {
      if (!isRunning() || isStale() || abort.signal.aborted) return;
      const chunk = fromOffset(slice.messages, cp);
      const last = chunk.at(-1);
      if (!last) continue;
      const { events, undecodable } = spec.decode(chunk);
      if (undecodable.length > 0) await onUndecodable(undecodable, partition);
      const started = performance.now();
      const stored = await db.run(
        { partition, from: chunk[0]?.offset, next: String(slice.next) },
        (pool) => spec.write(pool, key, events, slice.next),
        heartbeat,
      );
      if (stored === ABORTED) return;
      metrics.txSeconds.observe(labels, (performance.now() - started) / 1000);
      metrics.projected.inc(labels, events.length);
      cp = stored;
      checkpoints.set(partition, cp);
      lagGauge.position(topic, partition, cp);
      resolveOffset(last.offset);
      if (deps.commitOffsets)
        await commitOffsetsIfNecessary({
          topics: [{ topic, partitions: [{ partition, offset: String(cp) }] }],
        }).catch((err: unknown) =>
          log.debug({ err, partition }, 'kafka offset commit failed (postgres holds the checkpoint)'),
        );
      await heartbeat();
    }
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    // Runs synchronously inside the join, before the first fetch of the new assignment.
    generation += 1;
    checkpoints.clear(); // another member may have moved them while we did not own the partitions
    assigned = e.payload.memberAssignment[topic] ?? [];
    consumerUp = true;
    alignment = align(assigned, generation);
    log.info({ partitions: assigned }, 'joined the group');
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
      await Promise.all([admin.connect(), consumer.connect()]);
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      db.startProbe();
      log.info(`${spec.name} projector started`);
    },
    async stop() {
      abort.abort(new Error('projector stopping'));
      await consumer.disconnect(); // waits for the batch in progress
      await db.close();
      consumerUp = false;
      await Promise.allSettled([admin.disconnect(), lagGauge.stop()]);
      log.info(`${spec.name} projector stopped`);
    },
    ready: () => consumerUp && db.isUp(),
    status: () => ({ consumer: consumerUp, database: db.isUp() }),
    lag: () => consumerLag(admin, groupId, topic),
  };
}
