/**
 * The one checkpointed consumer: keeps a Postgres state from its topics with
 * exactly-once effect (docs/architecture.md "Postgres holds … each projector's checkpoint … written in the
 * same transaction as the rows it covers"). The projector's three projections and settlement are
 * specs of it (consumer-spec.ts).
 *
 * Postgres, not Kafka, holds the position. On every partition assignment the consumer seeks to
 * the stored checkpoint (forward past what is written, or back when Kafka's committed offset is
 * ahead of a rebuilt read model; `spec.initialOffset` or the first retained offset when there is
 * none), then tells the spec its new assignment (`spec.assigned`) before any batch of it is
 * written. Per Kafka batch, records below the checkpoint are skipped, the rest decoded and written in
 * chunks, each ONE atomic write holding its rows and the checkpoint; the Kafka commit after each
 * write is only a hint (lag, faster restarts).
 *
 * Failures are told apart:
 * - a record that can never be written (it does not decode, or Postgres refuses its data) goes to
 *   its topic's dead-letter topic (dead-letter.ts) with the reason, and the consumer goes on;
 * - a transient failure (connection lost, timeout, serialization failure, a broker that does not
 *   take the append) is retried with capped backoff from the same offsets through the database
 *   gate (lib/db/gate.ts), while `ready()` is false and `status().waiting` says why; nothing is
 *   skipped.
 *
 * Dead-lettering is at-least-once: a crash between the dead-letter append and the write that moves
 * the checkpoint past the record appends it again on restart.
 *
 * The Kafka commit, though only a hint, is what every outside tool reads as the group's position:
 * one that meets a moved coordinator is retried (lib/log/offset-commit.ts), and failures are
 * warnings, counted, with the lag against the committed offset exposed beside the processed one
 * (consumer-lag.ts).
 */
import type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import pRetry from 'p-retry';
import type { Registry } from 'prom-client';
import type { SharedConfig } from '../config/shared.ts';
import { readCheckpoints } from '../db/checkpoints.ts';
import { ABORTED, createDbGate, type DbGate } from '../db/gate.ts';
import { createSql, type Sql } from '../db/pool.ts';
import type { Logger } from '../logger.ts';
import { type ConsumerLag, trackConsumerLag } from './consumer-lag.ts';
import { type ConsumerMetrics, consumerLag, createConsumerMetrics } from './consumer-metrics.ts';
import {
  type ConsumerSpec,
  chunksOf,
  decodeAll,
  fromOffset,
  type Poison,
  writeIsolating,
} from './consumer-spec.ts';
import { deadLetterMessage } from './dead-letter.ts';
import { commitRetrying } from './offset-commit.ts';
import { deadLetterOf, ensureTopics, type TopicKey, topicName } from './topics.ts';

export interface CheckpointedConsumerOptions {
  /** Backoff of a failed write: first and longest wait in ms (200, 3000); retried until it succeeds. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** When no database call succeeded for this long (ms), a `select 1` probe keeps readiness honest (2000). */
  readonly probeIntervalMs?: number;
  /** Registry for the metrics, shared with the process's other consumers (a new one by default). */
  readonly registry?: Registry;
}

export interface CheckpointedConsumerDeps {
  readonly config: Pick<SharedConfig, 'kafka' | 'db'>;
  readonly kafka: Kafka;
  /** The pool to start with; after a connection failure the consumer uses pools of its own (lib/db/gate.ts). */
  readonly sql: Sql;
  readonly logger: Logger;
  readonly groupId: string;
  /** Longest wait of a fetch for new records, ms. */
  readonly maxWaitTimeInMs: number;
  /** Commit the group's offset after each write, as a hint (false: a throw-away group per start). */
  readonly commitOffsets: boolean;
  /** `consumer` label of its `kafka_consumer_lag` series (`projector-<spec.name>`). */
  readonly lagName?: string;
  readonly options?: CheckpointedConsumerOptions;
}

/** Readiness details for a /ready body. */
export type ConsumerStatus = {
  readonly consumer: boolean;
  readonly database: boolean;
  /** What a transient failure is being retried for, when one is. */
  readonly waiting?: string;
};

export interface CheckpointedConsumer {
  /** Connects, creates its topics and their dead-letter topics when missing, joins its group and starts consuming; resolves once running. */
  start(): Promise<void>;
  /** Stops consuming after the write in progress, disconnects the Kafka clients, ends its own pools (not `sql`). */
  stop(): Promise<void>;
  /** True while the consumer is in its group, the last database call succeeded and nothing is being retried. */
  ready(): boolean;
  status(): ConsumerStatus;
  /** High-water mark minus the group's committed offset, per partition of its first topic (records). */
  lag(): Promise<Map<number, bigint>>;
  readonly metrics: ConsumerMetrics;
}

const big = (v: string | number | null | undefined, fallback = 0n) =>
  v === null || v === undefined ? fallback : BigInt(v);
/** Math.max for bigints. */
// biome-ignore lint/complexity/useMathMinMax: Math.max does not take bigints.
const bigMax = (...xs: bigint[]): bigint => xs.reduce((m, x) => (x > m ? x : m));

/** Mutable state of one consumer, shared by its parts. */
interface ConsumerState {
  consumerUp: boolean;
  /** Counts group joins; work begun for an older generation is dropped. */
  generation: number;
  assigned: Record<string, number[]>;
  /** Set while an append (dead letter, afterCommit) is being retried. */
  appendWaiting: string | undefined;
  /** Settles true once the current assignment's positions match Postgres. */
  alignment: Promise<boolean>;
}

/** Everything the parts of one checkpointed consumer share; built once by `buildCheckpointedConsumer`. */
interface Ctx<E> {
  readonly spec: ConsumerSpec<E>;
  readonly deps: CheckpointedConsumerDeps;
  /** Full topic name → its key, for every topic of the spec. */
  readonly keyOf: ReadonlyMap<string, TopicKey>;
  readonly topics: readonly string[];
  readonly log: Logger;
  readonly consumer: Consumer;
  readonly admin: Admin;
  readonly producer: Producer;
  readonly abort: AbortController;
  readonly metrics: ConsumerMetrics;
  readonly lagGauge: ConsumerLag;
  readonly db: DbGate;
  /** Write backoff, ms. */
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  /** Next offset to read per assigned `topic:partition`, as stored in Postgres; reloaded on every assignment. */
  readonly checkpoints: Map<string, bigint>;
  readonly state: ConsumerState;
}

type Heartbeat = () => Promise<void>;
const tp = (topic: string, p: number) => `${topic}:${p}`;

/**
 * Loads the checkpoints of the assignment, seeks every partition whose Kafka position differs,
 * then tells the spec what it has (`spec.assigned`, for every topic, also with no partitions).
 * @returns false when superseded by a newer join or when a step failed (logged; retried on the next batch).
 */
async function align<E>(ctx: Ctx<E>, assignment: Record<string, number[]>, gen: number): Promise<boolean> {
  const { spec, db } = ctx;
  try {
    for (const [topic, topicKey] of ctx.keyOf) {
      const partitions = assignment[topic] ?? [];
      if (partitions.length > 0 && !(await alignTopic(ctx, topic, topicKey, partitions, gen))) return false;
      if (!spec.assigned) continue;
      const told = await db.run({ step: 'assigned', topic }, (pool) =>
        (spec.assigned as NonNullable<typeof spec.assigned>)(pool, topicKey, partitions),
      );
      if (told === ABORTED || gen !== ctx.state.generation) return false;
    }
    return true;
  } catch (err) {
    ctx.log.error({ err }, 'could not align the assignment with postgres; retrying on the next batch');
    return false;
  }
}

/** Reads the checkpoints of one topic's assigned partitions and seeks; false when superseded. */
async function alignTopic<E>(
  ctx: Ctx<E>,
  topic: string,
  topicKey: TopicKey,
  partitions: readonly number[],
  gen: number,
): Promise<boolean> {
  const { spec, log } = ctx;
  const stored = await ctx.db.run({ step: 'read checkpoints' }, (pool) =>
    readCheckpoints(pool, spec.name, topic),
  );
  if (stored === ABORTED || gen !== ctx.state.generation) return false;
  const [committed, offsets] = await Promise.all([
    ctx.admin.fetchOffsets({ groupId: ctx.deps.groupId, topics: [topic] }),
    ctx.admin.fetchTopicOffsets(topic),
  ]);
  if (gen !== ctx.state.generation) return false;
  for (const p of partitions) {
    const o = offsets.find((x) => x.partition === p);
    const low = big(o?.low);
    const start = stored.get(p) ?? spec.initialOffset?.(topicKey, low, big(o?.high)) ?? low;
    const target = bigMax(start, low); // never below the first retained offset
    const c = big(committed[0]?.partitions.find((x) => x.partition === p)?.offset, -1n);
    const position = c < 0n ? low : c; // no commit yet: fromBeginning
    ctx.checkpoints.set(tp(topic, p), target);
    ctx.lagGauge.position(topic, p, target);
    if (position === target) continue;
    if (position > target)
      log.warn({ topic, partition: p, position, target }, 'kafka is ahead of postgres; seeking back');
    else log.info({ topic, partition: p, position, target }, 'seeking to the postgres checkpoint');
    ctx.consumer.seek({ topic, partition: p, offset: String(target) });
  }
  return true;
}

/**
 * Waits for the alignment, heartbeating every second so a slow database does not cost the group
 * membership; a failed alignment is started again for the next batch. @returns true once aligned.
 */
async function awaitAlignment<E>(ctx: Ctx<E>, heartbeat: Heartbeat): Promise<boolean> {
  const { state, abort } = ctx;
  let settled: boolean | undefined;
  const done = state.alignment.then((ok) => {
    settled = ok;
  });
  while (settled === undefined && !abort.signal.aborted) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer); // runs per batch: no second of pending timer left behind each time
    if (settled === undefined) await heartbeat();
  }
  if (settled === false && !abort.signal.aborted)
    state.alignment = align(ctx, state.assigned, state.generation);
  return settled === true;
}

/**
 * Retries `f` (a broker append) with the write backoff until it succeeds, heartbeating between
 * attempts. @returns false when the consumer stops first.
 */
async function appendRetrying<E>(
  ctx: Ctx<E>,
  what: string,
  f: () => Promise<unknown>,
  heartbeat: Heartbeat,
): Promise<boolean> {
  const { abort, state, log } = ctx;
  if (abort.signal.aborted) return false;
  try {
    await pRetry(f, {
      retries: 10,
      forever: true,
      minTimeout: ctx.retryMinMs,
      maxTimeout: ctx.retryMaxMs,
      factor: 2,
      randomize: true,
      signal: abort.signal,
      onFailedAttempt: async (err) => {
        state.appendWaiting = `${what}: ${err.message}`;
        log.warn({ err, attempt: err.attemptNumber }, `${what} failed; retrying`);
        await heartbeat().catch(() => {});
      },
    });
    state.appendWaiting = undefined;
    return true;
  } catch (err) {
    if (abort.signal.aborted) return false;
    throw err;
  }
}

/**
 * Commits `next` as the group's offset of topic/partition: a hint, so a failure never stops the
 * consumer, but never a silent one. A coordinator that moved is found again and the commit asked
 * again (lib/log/offset-commit.ts); every failed attempt is a warning and counts in
 * kafka_consumer_commit_failures_total, and kafka_consumer_committed_lag keeps showing what the
 * broker holds.
 */
async function commitHint<E>(
  ctx: Ctx<E>,
  topic: string,
  partition: number,
  next: bigint,
  commit: EachBatchPayload['commitOffsetsIfNecessary'],
  heartbeat: Heartbeat,
): Promise<void> {
  const { lagGauge, log } = ctx;
  try {
    await commitRetrying(
      () => commit({ topics: [{ topic, partitions: [{ partition, offset: String(next) }] }] }),
      {
        signal: ctx.abort.signal,
        onFailure: async (err, attempt, willRetry) => {
          lagGauge.commitFailed();
          log.warn(
            { err, topic, partition, offset: String(next), attempt },
            willRetry
              ? 'kafka offset commit failed; finding the coordinator and retrying'
              : 'kafka offset commit failed; postgres holds the checkpoint, the next batch commits again',
          );
          // The group's session outlasts the retries (a heartbeat to a moved coordinator fails
          // too and makes kafkajs rejoin, which is fine).
          if (willRetry) await heartbeat().catch(() => {});
        },
      },
    );
    lagGauge.committed(topic, partition, next);
  } catch {
    // Logged and counted above; the checkpoint in Postgres is what the consumer resumes from.
  }
}

/**
 * The dead-letter path of one partition's batch: appends the records that can never be written to
 * the topic's dead-letter topic (acks all, retried until it succeeds), counts and logs them.
 * The returned function resolves true (also for none) and @throws Error('stopping') when the
 * consumer stops before the append succeeded.
 */
function deadLetterer<E>(
  ctx: Ctx<E>,
  topicKey: TopicKey,
  topic: string,
  partition: number,
  heartbeat: Heartbeat,
): (poison: readonly Poison[]) => Promise<boolean> {
  const { spec, deps } = ctx;
  const dlq = topicName(deps.config, deadLetterOf(topicKey));
  const origin = { topic, partition, projection: spec.name };
  const labels = { projection: spec.name, topic };
  return async (poison) => {
    if (poison.length === 0) return true;
    const sent = await appendRetrying(
      ctx,
      'dead-letter append',
      () =>
        ctx.producer.send({
          topic: dlq,
          acks: -1,
          messages: poison.map((p) => deadLetterMessage(p, origin)),
        }),
      heartbeat,
    );
    if (!sent) throw new Error('stopping');
    ctx.metrics.deadLettered.inc(labels, poison.length);
    for (const p of poison)
      ctx.log.error({ partition, offset: p.message.offset, reason: p.reason }, 'record dead-lettered');
    return true;
  };
}

/**
 * The write-and-checkpoint step of one chunk: dead-letters what does not decode, writes the rest
 * with the checkpoint `slice.next` in one transaction (through the database gate, retried), then
 * runs the spec's after-commit appends, resolves the chunk's last offset and commits the hint.
 * @returns the new checkpoint, or undefined when the consumer stops (nothing of the chunk is
 * counted as done then: the restart starts from it again).
 */
async function writeChunk<E>(
  ctx: Ctx<E>,
  payload: EachBatchPayload,
  topicKey: TopicKey,
  chunk: readonly KafkaMessage[],
  next: bigint,
  deadLetter: (poison: readonly Poison[]) => Promise<boolean>,
): Promise<bigint | undefined> {
  const { spec, metrics, abort } = ctx;
  const { batch, heartbeat } = payload;
  const { topic, partition } = batch;
  const labels = { projection: spec.name, topic };
  const last = chunk.at(-1) as KafkaMessage;
  const { items, poison } = decodeAll(spec, topicKey, chunk);
  try {
    await deadLetter(poison);
  } catch {
    return undefined; // stopping: nothing of this chunk is written, the restart starts from it again
  }
  const key = { projection: spec.name, topic, topicKey, partition };
  const started = performance.now();
  let stored: Awaited<ReturnType<typeof writeIsolating<E>>> | typeof ABORTED;
  try {
    stored = await ctx.db.run(
      { partition, from: chunk[0]?.offset, next: String(next) },
      (pool) => writeIsolating(spec, pool, key, items, next, (p) => deadLetter([p]).then(() => {})),
      heartbeat,
    );
  } catch (err) {
    if (abort.signal.aborted) return undefined;
    throw err;
  }
  if (stored === ABORTED) return undefined;
  metrics.txSeconds.observe(labels, (performance.now() - started) / 1000);
  metrics.projected.inc(labels, items.length);
  const cp = stored.checkpoint;
  ctx.checkpoints.set(tp(topic, partition), cp);
  ctx.lagGauge.position(topic, partition, cp);
  for (const after of stored.afterCommit)
    if (!(await appendRetrying(ctx, `${spec.name} after-commit`, after, heartbeat))) return undefined;
  payload.resolveOffset(last.offset);
  if (ctx.deps.commitOffsets)
    await commitHint(ctx, topic, partition, cp, payload.commitOffsetsIfNecessary, heartbeat);
  await heartbeat();
  return cp;
}

/**
 * The batch loop: waits for the assignment's alignment, skips what is below the checkpoint, then
 * writes the batch chunk by chunk (`writeChunk`) while the consumer runs and the batch is current.
 */
async function eachBatch<E>(ctx: Ctx<E>, payload: EachBatchPayload): Promise<void> {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const { topic, partition } = batch;
  const topicKey = ctx.keyOf.get(topic);
  if (!topicKey) return;
  ctx.metrics.batchSize.observe({ projection: ctx.spec.name, topic }, batch.messages.length);
  if (!(await awaitAlignment(ctx, heartbeat)) || isStale()) return; // a seek re-fetches from the checkpoint
  let cp = ctx.checkpoints.get(tp(topic, partition));
  if (cp === undefined) return;
  const end = BigInt(batch.lastOffset()) + 1n;
  if (end <= cp) {
    resolveOffset(batch.lastOffset()); // all written already; move on without a write
    return;
  }
  const deadLetter = deadLetterer(ctx, topicKey, topic, partition, heartbeat);
  for (const slice of chunksOf(batch.messages, ctx.spec.chunkSize, end)) {
    if (!isRunning() || isStale() || ctx.abort.signal.aborted) return;
    const chunk = fromOffset(slice.messages, cp);
    if (chunk.length === 0) continue;
    const written = await writeChunk(ctx, payload, topicKey, chunk, slice.next, deadLetter);
    if (written === undefined) return;
    cp = written;
  }
}

/**
 * The rebalance handling: on every group join (emitted synchronously inside the join, before the
 * first fetch of the new assignment) the checkpoints are forgotten and the alignment starts for
 * the new generation; a crash or stop marks the consumer down.
 */
function listenToGroup<E>(ctx: Ctx<E>): void {
  const { consumer, state, log } = ctx;
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    state.generation += 1;
    ctx.checkpoints.clear(); // another member may have moved them while we did not own the partitions
    state.assigned = e.payload.memberAssignment;
    state.consumerUp = true;
    state.alignment = align(ctx, state.assigned, state.generation);
    log.info({ assignment: state.assigned }, 'joined the group');
  });
  consumer.on(consumer.events.CRASH, (e) => {
    state.consumerUp = false;
    log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
  });
  consumer.on(consumer.events.STOP, () => {
    state.consumerUp = false;
  });
}

/** Creates the Kafka clients, metrics, lag gauge and database gate of one consumer; nothing connects. */
function createCtx<E>(spec: ConsumerSpec<E>, deps: CheckpointedConsumerDeps): Ctx<E> {
  const { config, kafka, groupId } = deps;
  const opts = deps.options ?? {};
  const keyOf = new Map<string, TopicKey>(spec.topics.map((k) => [topicName(config, k), k]));
  const topics = [...keyOf.keys()];
  const log = deps.logger.child({ component: `${spec.name}-consumer`, topics, groupId });
  // A member killed without leaving holds its partitions until its session expires, and a
  // restarted consumer waits that long to rejoin: 10 s instead of kafkajs' 30 s. Heartbeats also
  // go out between retries, whose wait is capped below that (retryMaxMs).
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: deps.maxWaitTimeInMs,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const abort = new AbortController();
  const metrics = createConsumerMetrics(opts.registry);
  const lagGauge = trackConsumerLag({
    kafka,
    registry: metrics.registry,
    name: deps.lagName ?? `projector-${spec.name}`,
    groupId,
    consumer,
    refreshMs: config.kafka.lagRefreshMs,
    commits: deps.commitOffsets,
    logger: log,
  });
  const retryMinMs = opts.retryMinMs ?? 200;
  const retryMaxMs = opts.retryMaxMs ?? 3000;
  const db = createDbGate({
    sql: deps.sql,
    newPool: () => createSql(config, { max: 3 }),
    log,
    signal: abort.signal,
    retryMinMs,
    retryMaxMs,
    probeIntervalMs: opts.probeIntervalMs ?? 2000,
    onFailure: () => metrics.dbFailures.inc({ projection: spec.name, topic: topics.join(',') }),
  });
  const state: ConsumerState = {
    consumerUp: false,
    generation: 0,
    assigned: {},
    appendWaiting: undefined,
    alignment: Promise.resolve(true),
  };
  return {
    spec,
    deps,
    keyOf,
    topics,
    log,
    consumer,
    admin: kafka.admin(),
    producer: kafka.producer({ allowAutoTopicCreation: false }),
    abort,
    metrics,
    lagGauge,
    db,
    retryMinMs,
    retryMaxMs,
    checkpoints: new Map(),
    state,
  };
}

/** Builds the consumer of `spec`; nothing connects until `start()`. */
export function buildCheckpointedConsumer<E>(
  spec: ConsumerSpec<E>,
  deps: CheckpointedConsumerDeps,
): CheckpointedConsumer {
  const ctx = createCtx(spec, deps);
  const { consumer, admin, producer, db, log, state, topics } = ctx;
  listenToGroup(ctx);

  const status = (): ConsumerStatus => {
    const reason = db.downReason() ? `postgres: ${db.downReason()}` : state.appendWaiting;
    return { consumer: state.consumerUp, database: db.isUp(), ...(reason ? { waiting: reason } : {}) };
  };

  return {
    metrics: ctx.metrics,
    async start() {
      await Promise.all([admin.connect(), consumer.connect(), producer.connect()]);
      // Its topics and their dead-letter topics, so a consumer never waits on someone else's setup.
      await ensureTopics(admin, deps.config, [...spec.topics, ...spec.topics.map(deadLetterOf)]);
      await consumer.subscribe({ topics: [...topics], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => eachBatch(ctx, payload),
        partitionsConsumedConcurrently: spec.partitionsAtOnce ?? 1,
      });
      db.startProbe();
      log.info(`${spec.name} consumer started`);
    },
    async stop() {
      ctx.abort.abort(new Error('consumer stopping'));
      await consumer.disconnect(); // waits for the batch in progress
      await db.close();
      state.consumerUp = false;
      await Promise.allSettled([admin.disconnect(), producer.disconnect(), ctx.lagGauge.stop()]);
      log.info(`${spec.name} consumer stopped`);
    },
    ready: () => state.consumerUp && db.isUp() && state.appendWaiting === undefined,
    status,
    lag: () => consumerLag(ctx.admin, deps.groupId, topics[0] as string),
  };
}
