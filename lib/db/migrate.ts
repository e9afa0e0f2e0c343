/**
 * Versioned SQL migrations (docs/conventions.md §10): files `NNN_name.sql` in a folder, applied in order,
 * each in its own transaction, recorded in `schema_migrations`. A Postgres advisory lock makes
 * concurrent starts (API and projector at once) apply each file exactly once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pRetry from 'p-retry';
import type { Logger } from '../logger.ts';
import { isConnectionError, type Sql } from './pool.ts';

export const MIGRATIONS_DIR = resolve(import.meta.dirname, 'migrations');
const FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The migration files of `dir`, sorted by version. @throws Error on a malformed name or a repeated version. */
export function listMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const out: Migration[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.sql')) continue;
    const m = FILE.exec(name);
    if (!m) throw new Error(`migration file ${name} must be named NNN_lower_snake.sql`);
    const version = Number(m[1]);
    if (out.some((x) => x.version === version)) throw new Error(`migration version ${version} used twice`);
    out.push({ version, name, sql: readFileSync(join(dir, name), 'utf8') });
  }
  return out;
}

/**
 * Creates `schema` if needed and applies the pending migrations in it.
 * @returns the versions applied by this call (empty when up to date).
 */
export async function migrate(sql: Sql, schema: string, dir: string = MIGRATIONS_DIR): Promise<number[]> {
  const migrations = listMigrations(dir);
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    // One lock per schema: concurrent starters wait here, then see the work done.
    await tx`select pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`;
    await tx.unsafe(`create schema if not exists "${schema}"`);
    await tx.unsafe(`set local search_path to "${schema}"`);
    await tx.unsafe(
      'create table if not exists schema_migrations (version int primary key, name text not null, applied_at timestamptz not null default now())',
    );
    const done = new Set((await tx`select version from schema_migrations`).map((r) => Number(r.version)));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
  });
  return applied;
}

/**
 * `migrate`, retried while Postgres cannot be reached (npm start launches the database and the
 * services at once): 12 retries with 0.5–5 s backoff, about a minute in all. Any other error
 * (a bad migration) fails at once. `dir` as in `migrate` (the operator sandbox has its own).
 */
export async function migrateWhenReachable(
  sql: Sql,
  schema: string,
  logger: Logger,
  dir: string = MIGRATIONS_DIR,
): Promise<number[]> {
  return pRetry(() => migrate(sql, schema, dir), {
    retries: 12,
    minTimeout: 500,
    maxTimeout: 5000,
    shouldRetry: (err) => isConnectionError(err),
    onFailedAttempt: (err) =>
      logger.warn({ attempt: err.attemptNumber, err: err.message }, 'database not reachable yet'),
  });
}
