/**
 * Batched `last_used_at` writes ("written in batches, not per request"): every
 * AUTH_BATCH_MS the uses recorded by the guard are written in ONE statement
 * (`update … from unnest`), never moving a time back. A key whose row the auth-keys projector has
 * not written yet is kept for the next batch (at most 3 times). A failed write puts the batch back.
 */
import type { Sql } from '../../../lib/db/pool.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { LastUsed } from './guard.ts';

export interface LastUsedWriter {
  /** Writes what is pending now. @returns how many rows were updated. */
  flush(): Promise<number>;
  /** Stops the timer after a final flush. */
  stop(): Promise<void>;
}

/** Starts the periodic writer. */
export function startLastUsedWriter(deps: {
  sql: Sql;
  lastUsed: LastUsed;
  periodMs: number;
  logger: Logger;
}): LastUsedWriter {
  const log = deps.logger.child({ component: 'last-used' });
  const misses = new Map<string, number>();
  let running: Promise<number> = Promise.resolve(0);

  async function write(): Promise<number> {
    const batch = deps.lastUsed.drain();
    if (batch.size === 0) return 0;
    const ids = [...batch.keys()];
    try {
      const rows = await deps.sql<{ key_id: string }[]>`
        update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
        from unnest(${ids}::text[], ${ids.map((id) => new Date(batch.get(id) as number).toISOString())}::timestamptz[]) as u(key_id, at)
        where k.key_id = u.key_id
        returning k.key_id`;
      const hit = new Set(rows.map((r) => r.key_id));
      for (const id of ids) {
        if (hit.has(id)) misses.delete(id);
        else if ((misses.get(id) ?? 0) < 3) {
          misses.set(id, (misses.get(id) ?? 0) + 1);
          deps.lastUsed.requeue(id, batch.get(id) as number);
        } else misses.delete(id);
      }
      return rows.length;
    } catch (err) {
      for (const [id, at] of batch) deps.lastUsed.requeue(id, at);
      log.warn({ err }, 'last_used write failed; kept for the next batch');
      return 0;
    }
  }

  const flush = () => {
    running = running.then(write, write);
    return running;
  };
  const timer = setInterval(() => void flush(), deps.periodMs);
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
