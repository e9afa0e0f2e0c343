/**
 * Consumer lag per partition, one gauge for every kafkajs consumer of the project:
 *
 *   kafka_consumer_lag{consumer, topic, partition} = high-water mark − position
 *
 * where `position` is the next offset the consumer will process (one past the last processed
 * record: what a commit stores, and what our projectors keep as their Postgres checkpoint). It is
 * the figure kafka-consumer-groups.sh prints as LAG, computed per process rather than per group,
 * so consumers that commit nothing (the edges, the key tables) are covered too.
 *
 * Where the numbers come from:
 * - high-water marks: every batch (kafkajs `END_BATCH_PROCESS` carries the fetch's
 *   `highWatermark`), and a periodic admin read (`refreshMs`), which is what moves the lag of a
 *   partition that receives records while its consumer is paused or stuck, or that is idle;
 * - positions: reported by the consumer's own code (`position()`), since only it knows what is
 *   processed (a saga's watermark, a projector's checkpoint); a partition without a report falls
 *   back to the group's committed offset, then to its first retained offset (fromBeginning).
 * - assignment: `GROUP_JOIN`; partitions that moved to another member stop being reported here.
 *
 * `consumer` is a stable name (projector-rounds, edge-source, …), not the group id: several
 * consumers use a fresh group per start (`edge-<uuid>`), which would make a new series per
 * restart. Several trackers share one gauge per registry.
 *
 * A consumer that commits its group's offsets (`commits: true`) also gets
 *
 *   kafka_consumer_committed_lag{consumer, topic, partition} = high-water mark − committed offset
 *   kafka_consumer_commit_failures_total{consumer}            failed commit attempts
 *
 * the committed offset read from the broker at every refresh (and moved by `committed()` after a
 * commit of its own): what kafka-consumer-groups.sh and every outside tool see. When commits fail
 * it parts from `kafka_consumer_lag`, so the two never disagree silently (docs/decisions/readiness/0001-one-lag-gauge-for-every-consumer.md).
 */
import type { Admin, Consumer, Kafka } from 'kafkajs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';

/** Name of the gauge (dashboards and tests refer to it). */
export const CONSUMER_LAG_METRIC = 'kafka_consumer_lag';
/** High-water mark minus the group's committed offset, for consumers that commit. */
export const COMMITTED_LAG_METRIC = 'kafka_consumer_committed_lag';
/** Failed offset commit attempts per consumer. */
export const COMMIT_FAILURES_METRIC = 'kafka_consumer_commit_failures_total';

export interface ConsumerLagOptions {
  readonly kafka: Kafka;
  readonly registry: Registry;
  /** The `consumer` label: a stable name of this consumer. */
  readonly name: string;
  /** Group whose committed offsets stand in for partitions without a reported position. */
  readonly groupId: string;
  /**
   * The consumer to follow (assignment from GROUP_JOIN, high-water marks from its batches). Without
   * one, every partition of `topics` is followed from the group's committed offsets: the backlog of
   * a group that no process here runs (e.g. the replay group of a dead-letter topic).
   */
  readonly consumer?: Consumer;
  /** Topics followed when there is no `consumer`. */
  readonly topics?: readonly string[];
  /** Period of the admin read of high-water marks, ms (KAFKA_LAG_REFRESH_MS). */
  readonly refreshMs: number;
  /** The consumer commits its group's offsets: report the committed lag and commit failures too. */
  readonly commits?: boolean;
  readonly logger: Logger;
}

export interface ConsumerLag {
  /**
   * Starts the periodic read of a tracker without a consumer (nothing connects before); one with a
   * consumer starts by itself when the consumer joins its group.
   */
  start(): void;
  /** Records that everything below `next` of topic/partition is processed. */
  position(topic: string, partition: number, next: bigint): void;
  /** Lag of a partition in records, or undefined while its mark or position is unknown. */
  lag(topic: string, partition: number): bigint | undefined;
  /** Records that the group's committed offset of topic/partition is now `next` (a commit of ours succeeded). */
  committed(topic: string, partition: number, next: bigint): void;
  /** Counts one failed commit attempt in kafka_consumer_commit_failures_total. */
  commitFailed(): void;
  /** High-water mark minus the group's committed offset, records; undefined while unknown. */
  committedLag(topic: string, partition: number): bigint | undefined;
  /** Stops the timer and the listeners, disconnects the admin client, removes this consumer's series. */
  stop(): Promise<void>;
}

interface Source {
  readonly name: string;
  samples(): Array<{ topic: string; partition: number; lag: bigint }>;
  /** Committed-lag samples; empty for a consumer that does not commit. */
  committedSamples(): Array<{ topic: string; partition: number; lag: bigint }>;
}

const sources = new WeakMap<Registry, Set<Source>>();
const failureCounters = new WeakMap<Registry, Counter<'consumer'>>();

/** The registry's lag gauge, created once; it asks every tracker of the registry at scrape time. */
function lagGauge(registry: Registry): Set<Source> {
  let set = sources.get(registry);
  if (set) return set;
  const own = new Set<Source>();
  set = own;
  sources.set(registry, own);
  new Gauge({
    name: CONSUMER_LAG_METRIC,
    help: 'High-water mark minus the next offset to process, per consumer, topic and partition (records).',
    labelNames: ['consumer', 'topic', 'partition'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of own)
        for (const x of s.samples())
          this.set({ consumer: s.name, topic: x.topic, partition: String(x.partition) }, Number(x.lag));
    },
  });
  new Gauge({
    name: COMMITTED_LAG_METRIC,
    help: "High-water mark minus the group's offset as committed at the broker, per consumer that commits, topic and partition (records).",
    labelNames: ['consumer', 'topic', 'partition'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of own)
        for (const x of s.committedSamples())
          this.set({ consumer: s.name, topic: x.topic, partition: String(x.partition) }, Number(x.lag));
    },
  });
  failureCounters.set(
    registry,
    new Counter({
      name: COMMIT_FAILURES_METRIC,
      help: 'Failed offset commit attempts (a commit is retried on a coordinator error), per consumer',
      labelNames: ['consumer'] as const,
      registers: [registry],
    }),
  );
  return own;
}

const key = (topic: string, partition: number) => `${partition}\u0000${topic}`;

type Sample = { topic: string; partition: number; lag: bigint };
/** Followed partitions per topic. */
type Followed = Map<string, Set<number>>;

/**
 * What a tracker knows per `topic/partition`: high-water and first retained offsets, the position
 * its consumer reported and the group's committed offset (all offsets, records), and the two lags
 * computed from them.
 */
interface OffsetBook {
  readonly high: Map<string, bigint>;
  readonly low: Map<string, bigint>;
  readonly reported: Map<string, bigint>;
  readonly committed: Map<string, bigint>;
  /** Raises a high-water mark; a lower one (an older read) is ignored. */
  raiseHigh(k: string, h: bigint): void;
  lag(topic: string, partition: number): bigint | undefined;
  committedLag(topic: string, partition: number): bigint | undefined;
}

/** An empty offset book; lags are undefined until both a mark and a position are known. */
function createOffsetBook(): OffsetBook {
  const high = new Map<string, bigint>();
  const low = new Map<string, bigint>();
  const reported = new Map<string, bigint>();
  const committed = new Map<string, bigint>();
  return {
    high,
    low,
    reported,
    committed,
    raiseHigh(k, h) {
      // High-water marks only grow; a batch's mark may be older than the last admin read.
      if (h > (high.get(k) ?? -1n)) high.set(k, h);
    },
    lag(topic, partition) {
      const k = key(topic, partition);
      const h = high.get(k);
      if (h === undefined) return undefined;
      let p = reported.get(k);
      if (p === undefined) {
        const c = committed.get(k);
        p = c !== undefined && c >= 0n ? c : low.get(k);
      }
      if (p === undefined) return undefined;
      return h > p ? h - p : 0n;
    },
    committedLag(topic, partition) {
      const k = key(topic, partition);
      const h = high.get(k);
      const c = committed.get(k);
      const from = c !== undefined && c >= 0n ? c : low.get(k);
      if (h === undefined || from === undefined) return undefined;
      return h > from ? h - from : 0n;
    },
  };
}

/**
 * The periodic admin read of a tracker: high-water and first retained offsets of the followed
 * partitions, and the group's committed offsets when some partition has no reported position or
 * the consumer commits. `refresh()` never throws (a failure keeps the last values, logged once);
 * `stop()` disconnects the admin client without waiting for a read in flight.
 */
function createOffsetReader(o: ConsumerLagOptions, followed: Followed, book: OffsetBook, log: Logger) {
  let admin: Admin | undefined;
  let connected: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  let stopped = false;

  /** The admin client, connected; a failed connect is forgotten so the next refresh tries again. */
  async function connectedAdmin(): Promise<Admin> {
    if (!admin || !connected) {
      const a = o.kafka.admin();
      const c = a.connect().catch((err: unknown) => {
        if (admin === a) {
          admin = undefined;
          connected = undefined;
        }
        throw err;
      });
      admin = a;
      connected = c;
    }
    const a = admin;
    await connected;
    return a;
  }

  async function readOffsets(): Promise<void> {
    const client = await connectedAdmin();
    const topics = [...followed.keys()];
    let unreported = false;
    for (const topic of topics) {
      const parts = followed.get(topic) ?? new Set<number>();
      for (const x of await client.fetchTopicOffsets(topic)) {
        if (!o.consumer) parts.add(x.partition);
        if (!parts.has(x.partition)) continue;
        const k = key(topic, x.partition);
        book.raiseHigh(k, BigInt(x.high));
        book.low.set(k, BigInt(x.low));
        if (!book.reported.has(k)) unreported = true;
      }
    }
    if ((!unreported && !o.commits) || topics.length === 0) return;
    for (const t of await client.fetchOffsets({ groupId: o.groupId, topics })) {
      for (const p of t.partitions) book.committed.set(key(t.topic, p.partition), BigInt(p.offset));
    }
  }

  /** Reads high-water marks (and commits where needed) now. Never throws: a failure keeps the last values. */
  async function refresh(): Promise<void> {
    if (stopped || followed.size === 0) return;
    running ??= readOffsets()
      .then(() => {
        if (failing) log.info('consumer lag readable again');
        failing = false;
      })
      .catch((err: unknown) => {
        if (!failing && !stopped)
          log.warn(
            { err: (err as Error).message },
            'could not read offsets for the lag; keeping the last values',
          );
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    refresh,
    /** Starts the periodic read every `o.refreshMs` ms (once; never after `stop`). */
    startTimer(): void {
      if (timer || stopped) return;
      timer = setInterval(() => void refresh(), o.refreshMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      // A read in flight (kafkajs retries a missing topic for seconds) must not hold up a shutdown:
      // disconnecting makes it fail, and the failure is not logged once stopped.
      if (admin) {
        await connected?.catch(() => {});
        await admin.disconnect().catch(() => {});
      }
    },
  };
}

/** The gauge's view of one tracker: a sample per followed partition whose lag is known. */
function sourceOf(name: string, commits: boolean, followed: Followed, book: OffsetBook): Source {
  const collect = (f: (topic: string, partition: number) => bigint | undefined): Sample[] => {
    const out: Sample[] = [];
    for (const [topic, parts] of followed)
      for (const partition of parts) {
        const n = f(topic, partition);
        if (n !== undefined) out.push({ topic, partition, lag: n });
      }
    return out;
  };
  return {
    name,
    samples: () => collect(book.lag),
    committedSamples: () => (commits ? collect(book.committedLag) : []),
  };
}

/**
 * Follows `c`'s assignment (GROUP_JOIN: the followed partitions become the new assignment and
 * positions of partitions it lost are forgotten, then `onJoin`) and the high-water mark of each of
 * its batches. @returns the listeners' removers.
 */
function listenToConsumer(
  c: Consumer,
  followed: Followed,
  book: OffsetBook,
  onJoin: () => void,
): Array<() => void> {
  return [
    c.on(c.events.GROUP_JOIN, (e) => {
      followed.clear();
      for (const [topic, parts] of Object.entries(e.payload.memberAssignment))
        followed.set(topic, new Set(parts));
      // Positions of partitions another member now owns would only go stale here.
      for (const m of [book.reported, book.committed])
        for (const k of [...m.keys()]) {
          const [p, topic] = k.split('\u0000') as [string, string];
          if (!followed.get(topic)?.has(Number(p))) m.delete(k);
        }
      onJoin();
    }),
    c.on(c.events.END_BATCH_PROCESS, (e) => {
      const h = e.payload.highWatermark;
      if (/^\d+$/.test(h)) book.raiseHigh(key(e.payload.topic, e.payload.partition), BigInt(h));
    }),
  ];
}

/** Starts following a consumer (or a group's backlog); see the module comment. */
export function trackConsumerLag(o: ConsumerLagOptions): ConsumerLag {
  const log = o.logger.child({ component: 'consumer-lag', consumer: o.name });
  /** Followed partitions per topic; with a consumer, its assignment (empty until it joins). */
  const followed: Followed = new Map(o.consumer ? [] : (o.topics ?? []).map((t) => [t, new Set()]));
  const book = createOffsetBook();
  const reader = createOffsetReader(o, followed, book, log);
  const source = sourceOf(o.name, o.commits === true, followed, book);
  lagGauge(o.registry).add(source);
  const failures = failureCounters.get(o.registry);
  if (o.commits) failures?.inc({ consumer: o.name }, 0);
  const removers = o.consumer
    ? listenToConsumer(o.consumer, followed, book, () => {
        reader.startTimer();
        void reader.refresh();
      })
    : [];

  return {
    start() {
      reader.startTimer();
      void reader.refresh();
    },
    position(topic, partition, next) {
      book.reported.set(key(topic, partition), next);
    },
    lag: book.lag,
    committed(topic, partition, next) {
      const k = key(topic, partition);
      // A refresh in flight may bring an older read; a commit only moves the offset forward here.
      if (next > (book.committed.get(k) ?? -1n)) book.committed.set(k, next);
    },
    commitFailed() {
      failures?.inc({ consumer: o.name });
    },
    committedLag: book.committedLag,
    async stop() {
      for (const r of removers.splice(0)) r();
      sources.get(o.registry)?.delete(source);
      await reader.stop();
    },
  };
}
