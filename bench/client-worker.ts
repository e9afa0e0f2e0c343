/**
 * What every forked load-client process of the benchmarks does alike (bench/edge-clients.ts,
 * bench/lifecycle-watchers.ts; the parent side is edge-pool.ts `forkWorker`): open many
 * subscribers with a bounded number of handshakes in flight, and answer the parent's `{id, req}`
 * messages over IPC.
 */
import { wallNow } from './edge-wire.ts';

/** How an `open` request went: subscribers opened and failed, the first error, how long it took (ms). */
export interface OpenReply {
  opened: number;
  failed: number;
  firstError?: string;
  ms: number;
}

/**
 * Opens `count` connections with `openOne(i)`, at most `concurrency` at a time, pushing each one
 * opened into `into`; a failure is counted, not thrown.
 */
export async function openAll<C>(
  count: number,
  concurrency: number,
  openOne: (i: number) => Promise<C>,
  into: C[],
): Promise<OpenReply> {
  const t0 = wallNow();
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      try {
        into.push(await openOne(i));
      } catch (err) {
        failed++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { opened: count - failed, failed, firstError, ms: wallNow() - t0 };
}

/**
 * Answers each `{id, req}` message of the parent with `{id, reply}` (what `handle` resolves to) or
 * `{id, error}`; the process exits when the parent disconnects.
 */
export function serveParent<R>(handle: (req: R) => Promise<unknown>): void {
  process.on('message', (msg: { id: number; req: R }) => {
    handle(msg.req).then(
      (reply) => process.send?.({ id: msg.id, reply }),
      (err: Error) => process.send?.({ id: msg.id, error: err.message }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
