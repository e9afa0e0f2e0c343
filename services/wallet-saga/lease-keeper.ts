/**
 * The lease keeper (docs/decisions/money/0002-durable-callbacks-leases-and-fencing.md, the fencing
 * token (b) and (d)): owns the leased callbacks that wait for one of their operator's send slots
 * (send-queue.ts). Every third of a lease it renews all their leases in one statement (store.ts
 * `extendLeases`, fenced by holder and attempt number), so a lease never runs out in the queue and
 * the callback is not leased again, even by this instance; a callback whose lease is found taken
 * over is marked `lost` and is not sent. At stop, the callbacks still waiting are marked `lost` and
 * their leases given back, due at once.
 */
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import type { SagaMetrics } from './metrics.ts';
import { extendLeases, type LeasedCallback, leaseKey, releaseLease } from './store.ts';

/** A waiting callback's lease: until when it holds (Unix ms), and whether it was found taken over. */
export interface WaitingLease {
  until: number;
  lost: boolean;
}

export interface LeaseKeeperDeps {
  readonly sql: Sql;
  /** This instance's name in leases. */
  readonly owner: string;
  /** Unix ms. */
  readonly now: () => number;
  /** How long a lease lasts, ms; renewed every third of it (at least every 100 ms). */
  readonly leaseMs: number;
  readonly metrics: SagaMetrics;
  readonly log: Logger;
}

export class LeaseKeeper {
  private readonly waiting = new Map<LeasedCallback, WaitingLease>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: LeaseKeeperDeps) {}

  /** `c` starts waiting for a send slot, its lease held until `c.leaseUntil`. */
  hold(c: LeasedCallback): WaitingLease {
    const lease = { until: c.leaseUntil, lost: false };
    this.waiting.set(c, lease);
    this.deps.metrics.sendWaiting.set(this.waiting.size);
    return lease;
  }

  /** `c`'s slot came: its lease is no longer the keeper's to renew. */
  release(c: LeasedCallback): void {
    this.waiting.delete(c);
    this.deps.metrics.sendWaiting.set(this.waiting.size);
  }

  /**
   * Renews the leases of the callbacks waiting for a slot to now + `leaseMs`, in one statement;
   * marks those found taken over.
   * @throws the postgres.js error; nothing is then marked.
   */
  async renew(): Promise<void> {
    const entries = [...this.waiting];
    if (entries.length === 0) return;
    const until = this.deps.now() + this.deps.leaseMs;
    const held = await extendLeases(
      this.deps.sql,
      this.deps.owner,
      entries.map(([c]) => c),
      until,
    );
    for (const [c, w] of entries) {
      if (held.has(leaseKey(c))) w.until = Math.max(w.until, until);
      else w.lost = true;
    }
  }

  /** Renews every third of a lease (at least every 100 ms) until `stop`; failures are logged. */
  start(): void {
    this.timer = setInterval(
      () =>
        void this.renew().catch((err) =>
          this.deps.log.warn(
            { err: (err as Error).message },
            'renewing the leases of waiting callbacks failed',
          ),
        ),
      Math.max(100, Math.floor(this.deps.leaseMs / 3)),
    );
  }

  /** Stops renewing. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * The callbacks still waiting are not sent: marked `lost`, and their leases given back, due at
   * once for whoever runs next (this instance after a restart, or another). Failures to give one
   * back are ignored: that lease runs out instead.
   */
  async giveBack(): Promise<void> {
    const { sql, owner, now } = this.deps;
    const unsent = [...this.waiting.keys()];
    for (const w of this.waiting.values()) w.lost = true;
    this.waiting.clear();
    this.deps.metrics.sendWaiting.set(0);
    await Promise.all(unsent.map((c) => releaseLease(sql, owner, c, now(), now()).catch(() => {})));
  }
}
