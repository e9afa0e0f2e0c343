/**
 * Spreading the closing of open streams over a drain window at shutdown, so
 * that clients reconnecting to another edge arrive as a trickle rather than all at once.
 */

/** Tick of the drain schedule, ms: coarse enough for 20k sockets, fine enough for a short window. */
const TICK_MS = 10;

/**
 * Calls `close` on each item, spread evenly over `drainMs` ms (all at once when `drainMs` is 0 or
 * there is at most one item). Errors thrown by `close` are swallowed: a stream that is already
 * gone needs no closing.
 * @returns a promise that resolves once every item has been passed to `close`.
 */
export function closeSpread<T>(
  items: readonly T[],
  drainMs: number,
  close: (item: T) => void,
): Promise<void> {
  const safeClose = (item: T) => {
    try {
      close(item);
    } catch {
      // already closed
    }
  };
  if (drainMs <= 0 || items.length <= 1) {
    for (const i of items) safeClose(i);
    return Promise.resolve();
  }
  const ticks = Math.max(1, Math.floor(drainMs / TICK_MS));
  const perTick = Math.ceil(items.length / ticks);
  const step = drainMs / Math.ceil(items.length / perTick);
  return new Promise((resolve) => {
    let next = 0;
    const run = () => {
      const end = Math.min(items.length, next + perTick);
      for (; next < end; next++) safeClose(items[next] as T);
      if (next >= items.length) resolve();
      else setTimeout(run, step);
    };
    run();
  });
}
