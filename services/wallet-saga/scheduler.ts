/**
 * In-process scheduling of the saga's work without head-of-line blocking (issue 5: "one slow or
 * failing operator or player never stalls the others"). No I/O and no clock.
 *
 * - Per-key FIFO queues: the events of one key (one player) run one at a time, in log order, so a
 *   player's bet is answered before its rollback is sent; different keys run concurrently even
 *   when they share a partition.
 * - A bound on admitted-but-unfinished tasks: `admit` returns false at the bound and the caller
 *   pauses its consumer (backpressure) until `onCapacity` fires.
 * - A commit watermark per partition: the lowest offset admitted and not yet finished, or one past
 *   the highest offset seen when none is pending. Committing only up to it means a crash re-reads
 *   every record whose work might not be done (at-least-once; the callbacks are idempotent).
 * - `resetPartitions` forgets revoked partitions: tasks still running for them finish, but their
 *   completion no longer moves any watermark (the new owner re-reads from the committed offset).
 */

/** Work of one record; it must settle (resolve or reject) eventually. */
export type Task = () => Promise<void>;

interface PartitionState {
  /** Offsets admitted and unfinished, ascending (records are admitted in offset order). */
  readonly pending: bigint[];
  /** Highest offset admitted or skipped; -1 before the first. */
  highest: bigint;
}

export interface SchedulerEvents {
  /** A task threw: the caller decides (the saga treats it as fatal). */
  onError(err: unknown, partition: number, offset: bigint): void;
  /** A partition's watermark moved. */
  onWatermark(partition: number, next: bigint): void;
  /** Called when a task finishes while the bound had been reached. */
  onCapacity(): void;
}

interface Item {
  readonly task: Task;
  readonly partition: number;
  readonly offset: bigint;
  /** ok false: the task threw; its offset stays pending so the watermark never passes it. */
  readonly done: (ok: boolean) => void;
}

export class KeyedScheduler {
  private readonly queues = new Map<string, Item[]>();
  private readonly partitions = new Map<number, PartitionState>();
  private admitted = 0;
  private wasFull = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly maxInFlight: number,
    private readonly events: SchedulerEvents,
  ) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError('maxInFlight must be an integer >= 1');
  }

  /** Tasks admitted and not finished (queued or running). */
  get inFlight(): number {
    return this.admitted;
  }

  /** True when `offset` of `partition` was already admitted or skipped (a re-fetch after a rejoin). */
  seen(partition: number, offset: bigint): boolean {
    const p = this.partitions.get(partition);
    return p !== undefined && offset <= p.highest;
  }

  /** A record that needs no work: only moves the watermark. */
  skip(partition: number, offset: bigint): void {
    const p = this.state(partition);
    if (offset <= p.highest) return;
    p.highest = offset;
    this.emitWatermark(partition, p);
  }

  /**
   * Queues `task` behind the other tasks of `key`.
   * @returns false (nothing queued) when the bound is reached; the caller retries after onCapacity.
   */
  admit(partition: number, offset: bigint, key: string, task: Task): boolean {
    if (this.admitted >= this.maxInFlight) {
      this.wasFull = true;
      return false;
    }
    const p = this.state(partition);
    if (offset <= p.highest) return true;
    p.highest = offset;
    p.pending.push(offset);
    this.admitted++;
    const item: Item = { task, partition, offset, done: (ok) => this.finish(partition, p, offset, ok) };
    const queue = this.queues.get(key);
    if (queue) {
      queue.push(item);
      return true;
    }
    this.queues.set(key, [item]);
    void this.drain(key);
    return true;
  }

  /** The offset to commit for `partition` (next record to read), or undefined before any record. */
  watermark(partition: number): bigint | undefined {
    const p = this.partitions.get(partition);
    if (!p || p.highest < 0n) return undefined;
    return p.pending[0] ?? p.highest + 1n;
  }

  /** Forgets every partition not in `keep` (after a rebalance). */
  resetPartitions(keep: ReadonlySet<number>): void {
    for (const id of [...this.partitions.keys()]) if (!keep.has(id)) this.partitions.delete(id);
  }

  /** Resolves when no task is admitted (used by stop and tests). */
  idle(): Promise<void> {
    if (this.admitted === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private state(partition: number): PartitionState {
    let p = this.partitions.get(partition);
    if (!p) {
      p = { pending: [], highest: -1n };
      this.partitions.set(partition, p);
    }
    return p;
  }

  private async drain(key: string): Promise<void> {
    const queue = this.queues.get(key);
    while (queue && queue.length > 0) {
      const head = queue[0] as Item;
      let ok = true;
      try {
        await head.task();
      } catch (err) {
        ok = false;
        this.events.onError(err, head.partition, head.offset);
      }
      queue.shift();
      head.done(ok);
    }
    this.queues.delete(key);
  }

  private finish(partition: number, p: PartitionState, offset: bigint, ok: boolean): void {
    this.admitted--;
    // A revoked partition's state object is no longer the registered one: its watermark is moot.
    if (ok && this.partitions.get(partition) === p) {
      const i = p.pending.indexOf(offset);
      if (i >= 0) p.pending.splice(i, 1);
      if (i === 0) this.emitWatermark(partition, p);
    }
    if (this.wasFull && this.admitted < this.maxInFlight) {
      this.wasFull = false;
      this.events.onCapacity();
    }
    if (this.admitted === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private emitWatermark(partition: number, p: PartitionState): void {
    this.events.onWatermark(partition, p.pending[0] ?? p.highest + 1n);
  }
}
