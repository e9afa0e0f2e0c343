/**
 * When an operator is back (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward): this
 * instance's memory, per operator and per request path (bet, win, rollback, round-end path), of the
 * send time of the last attempt answered `failed` there. An attempt sent after it on the same path
 * and answered anything but `failed` is a recovery, and the dispatcher then pulls the operator's
 * waiting retries forward (store.ts `pullForward`).
 *
 * Per path, not per operator: an operator whose win path fails while its bet path answers would
 * otherwise "recover" at every debit, and its wins would be pulled forward into the outage. Send
 * times, not answer times: a success sent before a failure (answered after it, being slower) is no
 * sign that the path answers again. No clock and no I/O: the times come in.
 */
export class RecoveryWatch {
  /** `operator path` → send time (Unix ms) of the last failed attempt not yet followed by a success. */
  private readonly failing = new Map<string, number>();

  /**
   * Records one attempt's answer.
   * @param path the request's URL path (no query).
   * @param sentAt when the attempt was sent, Unix ms.
   * @param failed whether the answer was of class `failed` (5xx, timeout, malformed, …).
   * @returns true when this answer is a recovery: a success on a path whose last failure was sent
   *   before it (the path's failure is then forgotten until the next one).
   */
  answered(operatorId: string, path: string, sentAt: number, failed: boolean): boolean {
    const key = `${operatorId} ${path}`;
    const last = this.failing.get(key);
    if (failed) {
      if (last === undefined || sentAt > last) this.failing.set(key, sentAt);
      return false;
    }
    if (last === undefined || sentAt <= last) return false;
    this.failing.delete(key);
    return true;
  }

  /** Paths with a failure not yet followed by a success (all operators). */
  get failingPaths(): number {
    return this.failing.size;
  }
}

/** The path of a callback's URL, without its query (form B's GET callbacks carry one). */
export function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split('?')[0] ?? url;
  }
}
