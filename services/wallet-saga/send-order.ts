/**
 * Puts the answers of concurrent requests back in the order the requests were sent, per key (the
 * operator), for the circuit breaker (rules/wallet/breaker.ts): "N consecutive failed bet
 * callbacks" means consecutive in the order the bets were sent. Read in the order answers come
 * back, an operator that fails a few requests fast (a 500 at once) while its successes wait for its
 * database would show runs of failures that are not runs at all: with 64 requests in flight and 5%
 * of them failing, five fast failures overtake the slow successes sent between them about one time
 * in five. An answer is released once every request sent before it to the same key has been
 * answered (or given up), so the wait is bounded by the slowest request in flight (its timeout).
 */
export class SendOrder<T> {
  private readonly next = new Map<string, number>();
  private readonly released = new Map<string, number>();
  private readonly waiting = new Map<string, Map<number, T | null>>();

  /** @param release called with each answer of `key`, in send order (never for a `null` outcome). */
  constructor(private readonly release: (key: string, outcome: T) => void) {}

  /** The sequence number of a request of `key` about to be sent. */
  sent(key: string): number {
    const n = this.next.get(key) ?? 0;
    this.next.set(key, n + 1);
    return n;
  }

  /**
   * Records the outcome of request `seq` of `key` (null: it ended without one, e.g. it could not be
   * sent) and releases every outcome that is now in order.
   */
  answered(key: string, seq: number, outcome: T | null): void {
    let w = this.waiting.get(key);
    if (!w) {
      w = new Map();
      this.waiting.set(key, w);
    }
    w.set(seq, outcome);
    let r = this.released.get(key) ?? 0;
    while (w.has(r)) {
      const o = w.get(r) as T | null;
      w.delete(r);
      r += 1;
      if (o !== null) this.release(key, o);
    }
    this.released.set(key, r);
  }

  /** Answers held back waiting for earlier ones, all keys. */
  get held(): number {
    let n = 0;
    for (const w of this.waiting.values()) n += w.size;
    return n;
  }
}
