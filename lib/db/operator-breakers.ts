/**
 * The operators' circuit breakers in Postgres (operator_breakers, migration 008; the rules are
 * rules/wallet/breaker.ts). The wallet saga writes them (each change one locked read-modify-write,
 * so instances sharing an operator count its failures together); the API reads them before it
 * takes a bet and `request-access` before it grants a session.
 */
import { type BreakerState, CLOSED } from '../../rules/wallet/breaker.ts';
import type { Sql } from './pool.ts';

/** What the balance probe needs of the last failed bet. */
export interface ProbeTarget {
  readonly user_id: string;
  readonly currency: string;
  readonly session_id: string;
}

interface Row {
  state: 'closed' | 'open';
  failures: number;
  opened_at: string | null;
  retry_at: string | null;
  last_error: string | null;
  probe: unknown;
}

const toState = (r: Row | undefined): BreakerState =>
  r
    ? {
        state: r.state,
        failures: Number(r.failures),
        openedAt: r.opened_at === null ? null : Number(r.opened_at),
        retryAt: r.retry_at === null ? null : Number(r.retry_at),
        lastError: r.last_error,
      }
    : CLOSED;

/** The breaker of `operatorId` (closed when it has no row). @throws the postgres.js error. */
export async function readBreaker(sql: Sql, operatorId: string): Promise<BreakerState> {
  const rows = await sql<Row[]>`
    select state, failures, opened_at::text, retry_at::text, last_error, probe
    from operator_breakers where operator_id = ${operatorId}`;
  return toState(rows[0]);
}

/** Every open breaker with its probe target. @throws the postgres.js error. */
export async function openBreakers(
  sql: Sql,
): Promise<{ operatorId: string; state: BreakerState; probe: ProbeTarget | null }[]> {
  const rows = await sql<(Row & { operator_id: string })[]>`
    select operator_id, state, failures, opened_at::text, retry_at::text, last_error, probe
    from operator_breakers where state = 'open'`;
  return rows.map((r) => ({
    operatorId: r.operator_id,
    state: toState(r),
    probe: (typeof r.probe === 'string' ? JSON.parse(r.probe) : r.probe) as ProbeTarget | null,
  }));
}

/**
 * Changes the breaker of `operatorId` by `change` (given the current state) in one transaction
 * holding the row's lock, so concurrent changes by several instances apply one after the other.
 * @returns the states before and after.
 * @throws the postgres.js error.
 */
export async function updateBreaker(
  sql: Sql,
  operatorId: string,
  change: (s: BreakerState) => BreakerState,
  now: number,
  probe?: ProbeTarget,
): Promise<{ before: BreakerState; after: BreakerState }> {
  return sql.begin(async (tx) => {
    await tx`insert into operator_breakers (operator_id, state, updated_at) values (${operatorId}, 'closed', ${now})
             on conflict do nothing`;
    const [row] = await tx<Row[]>`
      select state, failures, opened_at::text, retry_at::text, last_error, probe
      from operator_breakers where operator_id = ${operatorId} for update`;
    const before = toState(row);
    const after = change(before);
    await tx`
      update operator_breakers set state = ${after.state}, failures = ${after.failures},
        opened_at = ${after.openedAt}, retry_at = ${after.retryAt}, last_error = ${after.lastError},
        probe = coalesce(${probe ? JSON.stringify(probe) : null}::jsonb, probe), updated_at = ${now}
      where operator_id = ${operatorId}`;
    return { before, after };
  });
}

/** Reads breakers through a short cache (the API checks one on every bet). */
export interface BreakerReader {
  /** The breaker of `operatorId` as of at most `cacheMs` ago. @throws the postgres.js error. */
  state(operatorId: string, nowMs: number): Promise<BreakerState>;
}

/** A reader over `sql` caching each operator's breaker for `cacheMs` (default 500 ms). */
export function createBreakerReader(sql: Sql, cacheMs = 500): BreakerReader {
  const cache = new Map<string, { at: number; state: BreakerState }>();
  return {
    async state(operatorId, nowMs) {
      const hit = cache.get(operatorId);
      if (hit && nowMs - hit.at < cacheMs) return hit.state;
      const state = await readBreaker(sql, operatorId);
      cache.set(operatorId, { at: nowMs, state });
      return state;
    },
  };
}
