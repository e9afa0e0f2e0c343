/**
 * Waking the dispatcher's loop: runs its pass (lease due callbacks and start them) one at a time.
 * A wake during a pass asks for one more pass after it (never two at once), and so does a pass
 * that found a full page (there may be more due). Besides the wakes the dispatcher asks for (a
 * commit that added callbacks, a stored batch of results, room that opened, retries pulled
 * forward), a pass runs every `pollMs` after the last timed one ended: retries that came due, other
 * instances' callbacks, leases that ran out. No I/O of its own; a pass's error ends that run of
 * passes and is handed to `failed`.
 */

/** A pass of the loop: resolves true when it should run again at once (it found a full page). */
export type Pass = () => Promise<boolean>;

export interface WakerDeps {
  readonly pass: Pass;
  /** Longest sleep between two passes, ms. */
  readonly pollMs: number;
  /** Whether the dispatcher is stopping: no wake, no further pass, no timer. */
  readonly stopped: () => boolean;
  /** A pass threw (logged by the caller; the next wake or poll tries again). */
  readonly failed: (err: unknown) => void;
}

export class Waker {
  private started = false;
  private looking = false;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private lookDone: Promise<void> = Promise.resolve();

  constructor(private readonly deps: WakerDeps) {}

  /** Runs a pass now, then every `pollMs`. @returns false when already started (nothing done). */
  start(): boolean {
    if (this.started) return false;
    this.started = true;
    void this.look().finally(() => this.schedule());
    return true;
  }

  /** Runs a pass now (or one more after the current one); nothing before `start` or once stopped. */
  wake(): void {
    if (!this.started || this.deps.stopped()) return;
    void this.look();
  }

  /**
   * No more timed passes; resolves when the pass in progress (if any) has ended. Call once the
   * dispatcher is stopping.
   */
  stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return this.lookDone;
  }

  private async look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = true;
    let finished!: () => void;
    this.lookDone = new Promise((r) => {
      finished = r;
    });
    try {
      do {
        this.again = false;
        if (await this.deps.pass()) this.again = true;
      } while (this.again && !this.deps.stopped());
    } catch (err) {
      this.deps.failed(err);
    } finally {
      this.looking = false;
      finished();
    }
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.deps.stopped()) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.look().finally(() => this.schedule());
    }, this.deps.pollMs);
  }
}
