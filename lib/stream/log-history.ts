/**
 * Reading the `rounds` topic from any offset for catch-ups: one kafkajs
 * consumer per edge, joined once, whose partitions stay paused until a chunk is asked for; then
 * the partition is sought to the chunk's start, resumed for the fetches that fill it, and paused
 * again. No consumer group is created per client, so a crowd resuming from far back costs the
 * broker one reader per edge.
 *
 * Chunks are aligned ranges of `chunkRecords` offsets of one partition, cached (least recently
 * used first out), so subscribers catching up from the same point share every read; the Avro
 * decoding of a record is shared as well (`ChunkRecord.delivery`). Records of a key (game) a
 * cursor does not want are skipped without decoding.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Kafka } from 'kafkajs';
import { admitByTime } from '../../rules/rounds/admission.ts';
import { decodeRoundEvent } from '../log/rounds-codec.ts';
import type { Logger } from '../logger.ts';
import { Delivery } from './hub.ts';

/** One record of a chunk. */
export interface ChunkRecord {
  readonly offset: bigint;
  /** The record key: the game slug. */
  readonly key: string;
  /** Append time, Unix ms. */
  readonly timestamp: number;
  readonly value: Buffer | null;
  /** Decoded on first use: the round, or null for other events and undecodable records. */
  delivery?: Delivery | null;
}

/** Records of partition `partition` from `start` (aligned) up to `end` (exclusive), in offset order. */
export interface LogChunk {
  readonly partition: number;
  readonly start: bigint;
  end: bigint;
  readonly records: ChunkRecord[];
}

export interface LogHistoryOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly logger: Logger;
  /** Offsets per chunk (default 1000). */
  readonly chunkRecords?: number;
  /** Chunks kept (default 12: about 12k rounds, decoded; more costs the live path GC pauses). */
  readonly cacheChunks?: number;
  /** A chunk read taking longer fails, ms (default 15000). */
  readonly readTimeoutMs?: number;
}

/** The round of a chunk record (decoded once, shared by every cursor), or null. */
export function deliveryOf(partition: number, r: ChunkRecord): Delivery | null {
  if (r.delivery !== undefined) return r.delivery;
  let d: Delivery | null = null;
  try {
    const e = decodeRoundEvent(r.value);
    // A round the time rule refuses is not replayed, as the live source does not stream it; a
    // duplicate or conflict of an id already given is dropped by the cursor's position.
    if (e.type === 'RoundFinished' && admitByTime(e, r.timestamp).admitted)
      d = new Delivery(e, r.timestamp, partition, r.offset);
  } catch {
    // undecodable: the projector dead-letters it; a catch-up skips it like the live source
  }
  r.delivery = d;
  return d;
}

interface Request {
  readonly partition: number;
  next: bigint;
  readonly to: bigint;
  readonly records: ChunkRecord[];
  readonly done: Deferred;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

/** A promise with its settle functions (Promise.withResolvers is Node 22+). */
function deferred(): Deferred {
  let resolve: () => void = () => {};
  let reject: (err: Error) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // a rejection nobody awaits (a stop between reads) is not unhandled
  return { promise, resolve, reject };
}

/** The history reader of one edge. */
export class LogHistory {
  private readonly chunkRecords: bigint;
  private readonly cacheChunks: number;
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, LogChunk>();
  private readonly loading = new Map<string, Promise<LogChunk>>();
  /** The request each partition is serving (one at a time per partition). */
  private readonly active = new Map<number, Request>();
  private readonly queues = new Map<number, Promise<unknown>>();
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private partitions: number[] = [];
  private joined = deferred();
  private started: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly opts: LogHistoryOptions) {
    this.chunkRecords = BigInt(opts.chunkRecords ?? 1000);
    this.cacheChunks = opts.cacheChunks ?? 12;
    this.timeoutMs = opts.readTimeoutMs ?? 15_000;
  }

  /** Connects and joins in the background; every read waits for it. Idempotent. */
  start(): Promise<void> {
    this.started ??= this.connect().catch((err) => {
      this.started = undefined;
      this.joined.reject(err);
      this.joined = deferred();
      throw err;
    });
    return this.started;
  }

  /** Disconnects; pending reads fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const r of this.active.values()) r.done.reject(new Error('log history stopped'));
    await this.consumer?.disconnect().catch(() => {});
    await this.admin?.disconnect().catch(() => {});
  }

  /**
   * The first offset per partition whose append time is at or after `ms` (the high-water mark
   * where none is); `ms` of 0 or less gives each partition's first offset.
   * @throws when the broker cannot be reached.
   */
  async offsetsForTime(ms: number): Promise<Map<number, bigint>> {
    const admin = await this.adminClient();
    const offs =
      ms <= 0
        ? (await admin.fetchTopicOffsets(this.opts.topic)).map((o) => ({
            partition: o.partition,
            offset: o.low,
          }))
        : await admin.fetchTopicOffsetsByTimestamp(this.opts.topic, ms);
    const high = await admin.fetchTopicOffsets(this.opts.topic);
    const out = new Map<number, bigint>();
    for (const o of offs) {
      const n = BigInt(o.offset);
      const hw = BigInt(high.find((h) => h.partition === o.partition)?.high ?? '0');
      out.set(o.partition, n < 0n ? hw : n);
    }
    return out;
  }

  /**
   * The chunk holding `offset` of `partition`, read at least up to `offset + 1` and at most up
   * to `limit` (exclusive; the caller's end, at or below the high-water mark).
   * @throws when the read fails or times out (broker down), or the reader was stopped.
   */
  async chunk(partition: number, offset: bigint, limit: bigint): Promise<LogChunk> {
    const start = offset - (offset % this.chunkRecords);
    const key = `${partition}:${start}`;
    const cached = this.cache.get(key);
    if (cached && cached.end > offset) {
      this.cache.delete(key); // most recently used last
      this.cache.set(key, cached);
      return cached;
    }
    const busy = this.loading.get(key);
    if (busy) {
      const c = await busy;
      if (c.end > offset) return c;
    }
    const end = start + this.chunkRecords < limit ? start + this.chunkRecords : limit;
    const load = this.fill(partition, start, cached, end).finally(() => this.loading.delete(key));
    this.loading.set(key, load);
    return load;
  }

  private async fill(partition: number, start: bigint, have: LogChunk | undefined, end: bigint) {
    const chunk: LogChunk = have ?? { partition, start, end: start, records: [] };
    const from = chunk.end;
    if (from < end) {
      const got = await this.read(partition, from, end);
      chunk.records.push(...got.records);
      chunk.end = got.next;
    }
    const key = `${partition}:${start}`;
    this.cache.delete(key);
    this.cache.set(key, chunk);
    while (this.cache.size > this.cacheChunks) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
    return chunk;
  }

  /** Reads [from, to) of `partition`, one request at a time per partition. */
  private read(partition: number, from: bigint, to: bigint): Promise<Request> {
    const prev = this.queues.get(partition) ?? Promise.resolve();
    const run = prev.catch(() => {}).then(() => this.fetch(partition, from, to));
    this.queues.set(
      partition,
      run.catch(() => {}),
    );
    return run;
  }

  private async fetch(partition: number, from: bigint, to: bigint): Promise<Request> {
    if (this.stopped) throw new Error('log history stopped');
    void this.start().catch(() => {});
    let timeout: ReturnType<typeof setTimeout> | undefined;
    const timer = new Promise<never>((_, reject) => {
      timeout = setTimeout(
        () => reject(new Error(`log read timed out after ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      await Promise.race([this.joined.promise, timer]);
      const req: Request = { partition, next: from, to, records: [], done: deferred() };
      this.active.set(partition, req);
      const c = this.consumer as Consumer;
      c.seek({ topic: this.opts.topic, partition, offset: String(from) });
      c.resume([{ topic: this.opts.topic, partitions: [partition] }]);
      try {
        await Promise.race([req.done.promise, timer]);
        return req;
      } finally {
        this.active.delete(partition);
        c.pause([{ topic: this.opts.topic, partitions: [partition] }]);
      }
    } finally {
      clearTimeout(timeout);
    }
  }

  private async adminClient(): Promise<Admin> {
    if (!this.admin) {
      const a = this.opts.kafka.admin();
      await a.connect();
      this.admin = a;
    }
    return this.admin;
  }

  private async connect(): Promise<void> {
    const { topic } = this.opts;
    const c = this.opts.kafka.consumer({ groupId: `edge-history-${randomUUID()}`, maxWaitTimeInMs: 50 });
    this.consumer = c;
    c.on(c.events.GROUP_JOIN, (e) => {
      this.partitions = (e.payload.memberAssignment[topic] ?? []) as number[];
      // Every partition is paused but those serving a request, which are sought again (a rejoin
      // after a broker outage starts from committed offsets, and this group commits none).
      const idle = this.partitions.filter((p) => !this.active.has(p));
      if (idle.length) c.pause([{ topic, partitions: idle }]);
      for (const r of this.active.values()) c.seek({ topic, partition: r.partition, offset: String(r.next) });
      this.joined.resolve();
    });
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch }) => {
        const req = this.active.get(batch.partition);
        if (!req) return;
        for (const m of batch.messages) {
          const off = BigInt(m.offset);
          if (off < req.next) continue;
          if (off >= req.to) break;
          req.records.push({
            offset: off,
            key: m.key?.toString() ?? '',
            timestamp: Number(m.timestamp),
            value: m.value,
          });
          req.next = off + 1n;
        }
        if (req.next >= req.to || req.next >= BigInt(batch.highWatermark)) req.done.resolve();
      },
    });
    this.opts.logger.debug({ topic }, 'log history reader running');
  }
}
