/**
 * The Postgres side of a rebuild around the swap: the shadow schema (a schema of its own per
 * model, migrated by the same versioned migrations as the live one, so its tables, indexes,
 * constraints and seed rows are the live ones' by construction), checks on the live schema before
 * anything is written, and the session lock that keeps two rebuilds of one model apart.
 *
 * Names: `<schema>__rebuild_<model>` holds the shadow tables while they fill, and
 * `<schema>__retired_<model>` receives the replaced live tables at the swap (dropped after the
 * comparison, kept when it found differences).
 */

import type { SharedConfig } from '../config/shared.ts';
import { migrate } from '../db/migrate.ts';
import { createSql, type Sql } from '../db/pool.ts';
import { RebuildError } from './errors.ts';
import type { ReadModel } from './models.ts';
import { ident, qualified } from './sql-names.ts';

/** The schemas of one rebuild. */
export interface RebuildSchemas {
  readonly live: string;
  readonly shadow: string;
  readonly retired: string;
}

/** Postgres truncates longer identifiers silently (NAMEDATALEN - 1). */
const MAX_IDENTIFIER_BYTES = 63;

/** The schema names for `model` in `live`. @throws RebuildError SCHEMA_NAME_TOO_LONG. */
export function rebuildSchemas(live: string, model: ReadModel): RebuildSchemas {
  const suffix = model.name.replaceAll('-', '_');
  const out = { live, shadow: `${live}__rebuild_${suffix}`, retired: `${live}__retired_${suffix}` };
  for (const name of [out.shadow, out.retired])
    if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES)
      throw new RebuildError(
        'SCHEMA_NAME_TOO_LONG',
        `schema name ${name} is longer than ${MAX_IDENTIFIER_BYTES} bytes; use a shorter DATABASE_SCHEMA`,
      );
  return out;
}

/**
 * Checks that the live tables exist and that no table outside the model references them (such a
 * foreign key would follow the replaced table into the retired schema and be dropped with it).
 * @throws RebuildError TABLES_MISSING or OUTSIDE_REFERENCE.
 */
export async function checkLiveTables(sql: Sql, schemas: RebuildSchemas, model: ReadModel): Promise<void> {
  const names = model.tables.map((t) => qualified(schemas.live, t));
  const found = await sql<{ name: string; oid: string | null }[]>`
    select n as name, to_regclass(n)::oid::text as oid from unnest(${names}::text[]) as n`;
  const missing = found.filter((r) => r.oid === null).map((r) => r.name);
  if (missing.length > 0)
    throw new RebuildError(
      'TABLES_MISSING',
      `read model ${model.name}: ${missing.join(', ')} not found; apply the migrations to schema ${schemas.live} first`,
    );
  const refs = await sql<{ name: string; ref: string }[]>`
    select c.conname as name, c.conrelid::regclass::text as ref
    from pg_constraint c
    where c.contype = 'f' and c.confrelid = any(${found.map((r) => r.oid as string)}::oid[])
      and not c.conrelid = any(${found.map((r) => r.oid as string)}::oid[])`;
  if (refs.length > 0)
    throw new RebuildError(
      'OUTSIDE_REFERENCE',
      `read model ${model.name}: ${refs.map((r) => `${r.ref} (${r.name})`).join(', ')} reference its tables; a swap would break them`,
    );
}

/** Drops `schema` and everything in it, if it exists. */
export async function dropSchema(sql: Sql, schema: string): Promise<void> {
  await sql.unsafe(`drop schema if exists ${ident(schema)} cascade`);
}

/**
 * Creates the shadow schema afresh (a leftover of an interrupted rebuild is dropped first, and so is
 * a retired schema kept by an earlier run) and applies every migration in it.
 */
export async function createShadow(sql: Sql, schemas: RebuildSchemas): Promise<void> {
  await dropSchema(sql, schemas.shadow);
  await dropSchema(sql, schemas.retired);
  await migrate(sql, schemas.shadow);
}

/** A small pool on the same database whose search_path is `schema`. */
export function poolFor(config: Pick<SharedConfig, 'db'>, schema: string, max = 2): Sql {
  return createSql({ db: { ...config.db, schema } }, { max });
}

/** Stored checkpoints of `projection` on `topic` in `schema`, by partition. */
export async function checkpointsIn(
  sql: Sql,
  schema: string,
  projection: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const rows = await sql.unsafe<{ partition: number; offset: string }[]>(
    `select "partition", "offset"::text as "offset" from ${qualified(schema, 'projection_checkpoints')}
     where projection = $1 and topic = $2`,
    [projection, topic],
  );
  return new Map(rows.map((r) => [r.partition, BigInt(r.offset)]));
}

/** A session-level lock per (schema, model) on a reserved connection; release() frees both. */
export interface RebuildLock {
  release(): Promise<void>;
}

/**
 * Takes the rebuild lock of `model` in `schemas.live`, without waiting.
 * @throws RebuildError REBUILD_RUNNING when another rebuild holds it.
 */
export async function takeRebuildLock(
  sql: Sql,
  schemas: RebuildSchemas,
  model: ReadModel,
): Promise<RebuildLock> {
  const conn = await sql.reserve();
  const key = `rebuild:${schemas.live}:${model.name}`;
  try {
    const [row] = await conn<{ ok: boolean }[]>`select pg_try_advisory_lock(hashtext(${key})) as ok`;
    if (!row?.ok)
      throw new RebuildError(
        'REBUILD_RUNNING',
        `a rebuild of ${model.name} in schema ${schemas.live} is already running`,
      );
  } catch (err) {
    conn.release();
    throw err;
  }
  return {
    async release() {
      await conn`select pg_advisory_unlock(hashtext(${key}))`.catch(() => {});
      conn.release();
    },
  };
}
