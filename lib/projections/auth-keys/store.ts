/**
 * Postgres side of the auth-keys projection: one statement per batch holding the key rows and the
 * checkpoint (same pattern and reasons as lib/projections/rounds/store.ts). Idempotent: replaying a
 * batch leaves the same rows, and the checkpoint never moves back.
 */

import { type CheckpointKey, checkpointUpsert } from '../../db/checkpoints.ts';
import type { Sql } from '../../db/pool.ts';
import type { KeyPatch } from './projection.ts';

// Booleans go as text[] and are cast per element: postgres.js does not serialise a boolean[] parameter.
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Applies `patches` and sets the checkpoint of `key` to `nextOffset` in one statement.
 * @throws the postgres.js error; nothing is then stored.
 */
export async function writeKeyPatches(
  sql: Sql,
  key: CheckpointKey,
  patches: readonly KeyPatch[],
  nextOffset: bigint,
): Promise<void> {
  const made = patches.filter((p) => p.created !== null);
  const c = made.map((p) => p.created as NonNullable<KeyPatch['created']>);
  const other = patches.filter((p) => p.created === null);
  await sql`
    with created as (
      insert into api_keys (key_id, name, kind, scopes, rate_limit, allowed_origins, admin, bound_domain,
                            created_at, revoked_at, deleted)
      select key_id, name, kind, scopes::jsonb, rate_limit, allowed_origins::jsonb, admin::boolean, bound_domain,
             created_at, revoked_at, deleted::boolean
      from unnest(
        ${c.map((v) => v.key_id)}::text[], ${c.map((v) => v.name)}::text[], ${c.map((v) => v.kind)}::text[],
        ${c.map((v) => JSON.stringify(v.scopes))}::text[], ${c.map((v) => v.rate_limit)}::int[],
        ${c.map((v) => JSON.stringify(v.allowed_origins))}::text[], ${c.map((v) => String(v.admin))}::text[],
        ${c.map((v) => v.bound_domain)}::text[], ${c.map((v) => iso(v.created_at))}::timestamptz[],
        ${made.map((p) => iso(p.revokedAt))}::timestamptz[], ${made.map((p) => String(p.deleted))}::text[]
      ) as t(key_id, name, kind, scopes, rate_limit, allowed_origins, admin, bound_domain, created_at, revoked_at, deleted)
      on conflict (key_id) do update set
        name = excluded.name, kind = excluded.kind, scopes = excluded.scopes, rate_limit = excluded.rate_limit,
        allowed_origins = excluded.allowed_origins, admin = excluded.admin, bound_domain = excluded.bound_domain,
        created_at = excluded.created_at, revoked_at = excluded.revoked_at, deleted = excluded.deleted
      returning 1
    ), changed as (
      update api_keys k set
        revoked_at = coalesce(k.revoked_at, u.revoked_at),
        deleted = k.deleted or u.deleted::boolean
      from unnest(
        ${other.map((p) => p.keyId)}::text[],
        ${other.map((p) => iso(p.revokedAt))}::timestamptz[],
        ${other.map((p) => String(p.deleted))}::text[]
      ) as u(key_id, revoked_at, deleted)
      where k.key_id = u.key_id
      returning 1
    ), checkpoint as (
      ${checkpointUpsert(sql, key, nextOffset)}
    )
    select (select count(*) from created) + (select count(*) from changed) as n`;
}
