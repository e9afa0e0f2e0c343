/**
 * Postgres access with postgres.js. Every connection's search_path is the configured schema, so
 * tests run in a schema of their own and production in `public`.
 */
import postgres from 'postgres';
import type { SharedConfig } from '../config/shared.ts';

export type Sql = postgres.Sql<Record<string, never>>;

/**
 * postgres.js runs its own array-types query (`pg_catalog.pg_type`, option fetch_types) as the first
 * statement of every new connection and drops that promise, so a connection cut during it surfaces
 * as an unhandled rejection nobody can catch; the caller's own query fails or succeeds by itself
 * (its error handling applies). Upstream, open: porsager/postgres#1192, #1205, #1223.
 * @returns true for exactly that rejection: that query, a connection error code or 57P01.
 */
export function isDriverArrayTypesFetch(error: unknown): boolean {
  const e = error as { code?: unknown; query?: unknown } | null | undefined;
  return (
    typeof e?.query === 'string' &&
    e.query.includes('pg_catalog.pg_type') &&
    e.query.includes('typarray') &&
    typeof e.code === 'string' &&
    (e.code.startsWith('CONNECTION_') || e.code === '57P01')
  );
}

let guarded = false;
/**
 * Keeps a process alive through the driver's dropped array-types rejection (isDriverArrayTypesFetch)
 * and through nothing else: any other unhandled rejection is thrown again, which ends the process
 * as Node's default does, unless another listener (a test runner) handles rejections itself.
 * Installed once per process by createSql.
 */
export function guardDriverRejections(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    if (isDriverArrayTypesFetch(reason)) return;
    if (process.listenerCount('unhandledRejection') > 1) return;
    throw reason;
  });
}

/** A pooled client bound to `config.db.schema` (created if missing by the migration step). */
export function createSql(config: Pick<SharedConfig, 'db'>, options: { max?: number } = {}): Sql {
  guardDriverRejections();
  return postgres(config.db.url, {
    max: options.max ?? config.db.poolMax,
    onnotice: () => {},
    connection: { search_path: config.db.schema, application_name: 'casino-platform' },
    connect_timeout: 5,
    idle_timeout: 30,
  }) as unknown as Sql;
}

/** True when the error means the database cannot be reached (vs. a bad query). */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code ?? '';
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'CONNECT_TIMEOUT',
      'CONNECTION_CLOSED',
      'CONNECTION_ENDED',
      'CONNECTION_DESTROYED',
      'EPIPE',
      'ENOTFOUND',
    ].includes(code) ||
    code.startsWith('57P') || // admin shutdown, crash shutdown, cannot connect now
    code.startsWith('08') // connection exception class
  );
}

/**
 * True when Postgres refused the data itself, so the same write can never succeed: SQLSTATE class
 * 22 (data exception: a NUL in text, a value out of range, bad encoding), 23 (integrity constraint
 * violation) or 54 (program limit exceeded, e.g. an index row too large). Everything else (lost
 * connections, timeouts, serialization failures 40001, deadlocks 40P01, resources 53, shutdowns
 * 57P) is transient and worth retrying. Source: PostgreSQL documentation, appendix A "Error Codes".
 */
export function isPermanentDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}
