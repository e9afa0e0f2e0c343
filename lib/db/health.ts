/**
 * The database half of a readiness check (GET /ready of the API and the operator sandbox).
 */
import type { Sql } from './pool.ts';

/** Whether Postgres answered, and why not. */
export type DatabaseCheck = { ok: true } | { ok: false; reason: string };

/** Runs `select 1`; never throws. A slow database counts as down after `timeoutMs` ms. */
export async function checkDatabase(sql: Sql, timeoutMs: number): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseCheck>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  const probe = sql`select 1`.then(
    (): DatabaseCheck => ({ ok: true }),
    (err: unknown): DatabaseCheck => ({ ok: false, reason: (err as Error).message || String(err) }),
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
