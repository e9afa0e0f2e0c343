/**
 * Postgres access with postgres.js. Every connection's search_path is the configured schema, so
 * tests run in a schema of their own and production in `public`.
 */
import postgres from 'postgres';
import type { SharedConfig } from '../config/shared.ts';

export type Sql = postgres.Sql<Record<string, never>>;

/** A pooled client bound to `config.db.schema` (created if missing by the migration step). */
export function createSql(config: Pick<SharedConfig, 'db'>, options: { max?: number } = {}): Sql {
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
