/**
 * The rounds projector: consumes the `rounds` topic and keeps the Postgres read models (round
 * history and the game list) with exactly-once effect (DESIGN.md "Postgres holds read models …").
 *
 * Postgres, not Kafka, holds the position. On every partition assignment the consumer seeks to
 * the stored checkpoint (forward past what is projected, or back when Kafka's committed offset is
 * ahead of a rebuilt read model). Per Kafka batch, records below the checkpoint are skipped, the
 * rest decoded, undecodable ones sent to the dead-letter topic, and the decoded ones written in
 * chunks, each ONE atomic statement holding its rows, the game-list update and the checkpoint
 * (rounds/store.ts). The Kafka commit after each write is only a hint (lag, faster restarts). A
 * failed write is retried with capped backoff from the same offsets, so a database outage delays
 * the projection and never skips a record.
 *
 * Dead-lettering is at-least-once: a crash between the dead-letter append and the write that
 * moves the checkpoint past the record appends it again on restart.
 */
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Config } from '../lib/config.ts';
import { trackConsumerLag } from '../lib/consumer-lag.ts';
import { createSql, type Sql } from '../lib/db.ts';
import type { Logger } from '../lib/logger.ts';
import { topicName } from '../lib/topics.ts';
import { ABORTED, createDbGate } from './db-gate.ts';
import { consumerLag, createProjectorMetrics, type ProjectorMetrics } from './metrics.ts';
import { deadLetterMessage, decodeMessages } from './rounds/decode.ts';
import { type CheckpointKey, readCheckpoints, writeChunk } from './rounds/store.ts';

/** Name of this projection in `projection_checkpoints` and in the `dlq-projection` header. */
export const ROUNDS_PROJECTION = 'rounds';

export interface ProjectorOptions {
  /** Most records per atomic write (5000). */
  readonly chunkSize?: number;
  /** Backoff of a failed write: first and longest wait in ms (200, 3000); retried until it succeeds. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** When no database call succeeded for this long (ms), a `select 1` probe keeps readiness honest (2000). */
  readonly probeIntervalMs?: number;
  /** Registry for the metrics, shared with the process's other projections (a new one by default). */
  readonly registry?: Registry;
}

export interface RoundsProjectorDeps {
  readonly config: Config;
  readonly kafka: Kafka;
  /** The pool to start with; after a connection failure the projector uses pools of its own (see db-gate.ts). */
  readonly sql: Sql;
  readonly logger: Logger;
  readonly options?: ProjectorOptions;
}

export interface RoundsProjector {
  /** Connects, joins `config.projector.group` and starts consuming; resolves once running. */
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

/** Builds the projector; nothing connects until `start()`. */
export function buildRoundsProjector(deps: RoundsProjectorDeps): RoundsProjector {
  const { config, kafka, sql } = deps;
  const opts = deps.options ?? {};
  const chunkSize = opts.chunkSize ?? 5000;
  const topic = topicName(config, 'rounds');
  const dlqTopic = topicName(config, 'roundsDeadLetter');
  const groupId = config.projector.group;
  const log = deps.logger.child({ component: 'rounds-projector', topic, groupId });
  // A member killed without leaving holds its partitions until its session expires, and a
  // restarted projector waits that long to rejoin: 10 s instead of kafkajs' 30 s. Heartbeats also
  // go out between database retries, whose wait is capped below that (retryMaxMs).
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 1000,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const admin = kafka.admin();
  const abort = new AbortController();
  const metrics = createProjectorMetrics(opts.registry);
  const labels = { projection: ROUNDS_PROJECTION, topic };
  const lagGauge = trackConsumerLag({
    kafka,
    registry: metrics.registry,
    name: `projector-${ROUNDS_PROJECTION}`,
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    logger: log,
  });
  const db = createDbGate({
    sql,
    newPool: () => createSql(config, { max: 3 }),
    log,
    signal: abort.signal,
    retryMinMs: opts.retryMinMs ?? 200,
    retryMaxMs: opts.retryMaxMs ?? 3000,
    probeIntervalMs: opts.probeIntervalMs ?? 2000,
    onFailure: () => metrics.dbFailures.inc(labels),
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
        readCheckpoints(pool, ROUNDS_PROJECTION, topic),
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
      await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
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
    const stored = checkpoints.get(partition);
    if (stored === undefined) return;
    let cp: bigint = stored;
    if (BigInt(batch.lastOffset()) < cp) {
      resolveOffset(batch.lastOffset()); // all projected already; move on without a write
      return;
    }
    const key: CheckpointKey = { projection: ROUNDS_PROJECTION, topic, partition };
    for (let i = 0; i < batch.messages.length; i += chunkSize) {
      if (!isRunning() || isStale() || abort.signal.aborted) return;
      const from: bigint = cp;
      const chunk: KafkaMessage[] = batch.messages
        .slice(i, i + chunkSize)
        .filter((m) => BigInt(m.offset) >= from);
      const last = chunk.at(-1);
      if (!last) continue;
      const { events, undecodable } = decodeMessages(chunk);
      if (undecodable.length > 0) {
        const origin = { topic, partition, projection: ROUNDS_PROJECTION };
        await producer.send({
          topic: dlqTopic,
          messages: undecodable.map((u) => deadLetterMessage(u, origin)),
        });
        metrics.deadLettered.inc(labels, undecodable.length);
        for (const u of undecodable)
          log.warn({ partition, offset: u.message.offset, reason: u.reason }, 'record dead-lettered');
      }
      // The batch's last offset also covers trailing transaction markers, which are never delivered.
      const next = BigInt(i + chunkSize >= batch.messages.length ? batch.lastOffset() : last.offset) + 1n;
      const started = performance.now();
      const result = await db.run(
        { partition, from: chunk[0]?.offset, next: String(next) },
        (pool) => writeChunk(pool, key, events, next),
        heartbeat,
      );
      if (result === ABORTED) return;
      metrics.txSeconds.observe(labels, (performance.now() - started) / 1000);
      metrics.projected.inc(labels, result.projected);
      cp = result.checkpoint;
      checkpoints.set(partition, cp);
      lagGauge.position(topic, partition, cp);
      resolveOffset(last.offset);
      await commitOffsetsIfNecessary({
        topics: [{ topic, partitions: [{ partition, offset: String(cp) }] }],
      }).catch((err: unknown) =>
        log.debug({ err, partition }, 'kafka offset commit failed (postgres holds the checkpoint)'),
      );
      await heartbeat();
    }
  }

  const lag = () => consumerLag(admin, groupId, topic);

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
      await Promise.all([admin.connect(), producer.connect(), consumer.connect()]);
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      db.startProbe();
      log.info('rounds projector started');
    },
    async stop() {
      abort.abort(new Error('projector stopping'));
      await consumer.disconnect(); // waits for the batch in progress
      await db.close();
      consumerUp = false;
      await Promise.allSettled([producer.disconnect(), admin.disconnect(), lagGauge.stop()]);
      log.info('rounds projector stopped');
    },
    ready: () => consumerUp && db.isUp(),
    status: () => ({ consumer: consumerUp, database: db.isUp() }),
    lag,
  };
}
