/**
 * Catch-up that never hurts live subscribers. Every resume of an edge replays
 * its missed rounds through one scheduler, which
 *
 * - runs in slices of at most `sliceMs` of CPU, each in its own `setImmediate` turn, so a live
 *   round read from the broker meanwhile waits at most one slice before the hub fans it out;
 * - bounds the rate: `perSubscriberRate` rounds a second for each subscriber and `totalRate` for
 *   the whole edge (token buckets), so a crowd resuming from offset 0 takes a bounded share of CPU;
 * - honours backpressure: a subscriber whose transport holds too many unsent bytes (`blocked()`)
 *   is skipped until it drains, and the others go on;
 * - serves subscribers in turn (round robin, at most `BATCH` rounds each per visit).
 *
 * Rounds come from a cursor: memory (recent rounds) or the log (log-cursor.ts).
 */
import type { Delivery } from './hub.ts';

/** The end of a cursor. */
export const END = Symbol('end');

/** Where a catch-up takes its rounds from, in the order to give them. */
export interface CatchUpCursor {
  /** The next round; null when a read must come first (`load`); END when there is no more. */
  next(): Delivery | null | typeof END;
  /** Reads what `next` needs. @throws when the log cannot be read. */
  load(): Promise<void>;
}

/** A cursor over rounds already in memory. */
export function memoryCursor(rounds: readonly Delivery[]): CatchUpCursor {
  let i = 0;
  return {
    next: () => (i < rounds.length ? (rounds[i++] as Delivery) : END),
    load: async () => {},
  };
}

/** One subscriber's catch-up. */
export interface CatchUpJob {
  readonly cursor: CatchUpCursor;
  /** Gives one round to the subscriber (dedupe and transport are the caller's). */
  emit(d: Delivery): void;
  /** True while the subscriber's transport holds more unsent bytes than a catch-up may add to. */
  blocked(): boolean;
  /** True once the subscriber is gone (closed, slow, revoked). */
  gone(): boolean;
  /** Runs a visit's emits at once (a transport packs them into one write: WebSocket cork). */
  batch?(run: () => void): void;
}

export interface CatchUpResult {
  readonly outcome: 'done' | 'gone' | 'failed';
  /** Rounds handed to `emit`. */
  readonly sent: number;
  readonly error?: Error;
}

export interface CatchUpOptions {
  /** Rounds a second per subscriber. */
  readonly perSubscriberRate: number;
  /** Rounds a second for every catch-up of this process together. */
  readonly totalRate: number;
  /** Longest run of catch-up work before yielding to the event loop, ms. */
  readonly sliceMs: number;
}

/** Rounds given to one subscriber per visit before the next one's turn. */
const BATCH = 32;
/** How often a scheduler with only blocked or rate-limited subscribers looks again, ms. */
const IDLE_POLL_MS = 5;

class Bucket {
  private tokens: number;
  private at = performance.now();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  available(now: number): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    return Math.floor(this.tokens);
  }

  take(n: number): void {
    this.tokens -= n;
  }
}

interface Running {
  readonly job: CatchUpJob;
  readonly bucket: Bucket;
  readonly done: (r: CatchUpResult) => void;
  sent: number;
  loading: boolean;
}

/** The catch-up scheduler of one edge process. */
export class CatchUpScheduler {
  private readonly jobs: Running[] = [];
  private readonly total: Bucket;
  private next = 0;
  private scheduled: 'immediate' | 'timer' | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly opts: CatchUpOptions) {
    this.total = new Bucket(opts.totalRate, Math.max(BATCH, opts.totalRate / 20));
  }

  /** Subscribers catching up now. */
  get active(): number {
    return this.jobs.length;
  }

  /** Runs `job` until its cursor ends, its subscriber goes, or a read fails. Never rejects. */
  run(job: CatchUpJob): Promise<CatchUpResult> {
    return new Promise((resolve) => {
      const rate = this.opts.perSubscriberRate;
      this.jobs.push({
        job,
        bucket: new Bucket(rate, Math.max(BATCH, rate / 20)),
        done: resolve,
        sent: 0,
        loading: false,
      });
      this.kick();
    });
  }

  /** Ends every catch-up at once (shutdown); each resolves as `gone`. */
  stopAll(): void {
    for (const r of this.jobs.splice(0)) r.done({ outcome: 'gone', sent: r.sent });
    clearTimeout(this.timer);
  }

  private kick(): void {
    if (this.scheduled === 'immediate') return;
    if (this.scheduled === 'timer') clearTimeout(this.timer);
    this.scheduled = 'immediate';
    setImmediate(() => this.tick());
  }

  private finish(r: Running, outcome: CatchUpResult['outcome'], error?: Error): void {
    const i = this.jobs.indexOf(r);
    if (i >= 0) this.jobs.splice(i, 1);
    r.done({ outcome, sent: r.sent, ...(error ? { error } : {}) });
  }

  private load(r: Running): void {
    r.loading = true;
    r.job.cursor.load().then(
      () => {
        r.loading = false;
        this.kick();
      },
      (err: unknown) => this.finish(r, 'failed', err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** Gives up to BATCH rounds to `r`; @returns how many. */
  private visit(r: Running, now: number): number {
    if (r.job.gone()) {
      this.finish(r, 'gone');
      return 0;
    }
    if (r.loading || r.job.blocked()) return 0;
    const n = Math.min(BATCH, r.bucket.available(now), this.total.available(now));
    let given = 0;
    let end = false;
    const run = () => {
      while (given < n) {
        const d = r.job.cursor.next();
        if (d === END) {
          end = true;
          break;
        }
        if (d === null) {
          this.load(r);
          break;
        }
        r.job.emit(d);
        given++;
      }
    };
    if (n > 0 && r.job.batch) r.job.batch(run);
    else run();
    r.sent += given;
    r.bucket.take(given);
    this.total.take(given);
    if (end) this.finish(r, 'done');
    return given;
  }

  private tick(): void {
    this.scheduled = undefined;
    const start = performance.now();
    let progressed = false;
    let idleVisits = 0;
    while (this.jobs.length > 0 && idleVisits < this.jobs.length) {
      const now = performance.now();
      if (now - start >= this.opts.sliceMs) break;
      // Out of the edge's tokens: stop here, so the next turn resumes with the same subscriber
      // (else one could be visited whenever tokens are there and another whenever they are not).
      if (this.total.available(now) < 1) break;
      this.next %= this.jobs.length;
      const r = this.jobs[this.next] as Running;
      this.next++;
      if (this.visit(r, now) > 0) {
        progressed = true;
        idleVisits = 0;
      } else idleVisits++;
    }
    if (this.jobs.length === 0) return;
    if (progressed) this.kick();
    else {
      this.scheduled = 'timer';
      this.timer = setTimeout(() => this.tick(), IDLE_POLL_MS);
    }
  }
}
