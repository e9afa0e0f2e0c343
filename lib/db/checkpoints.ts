/**
 * Consumer checkpoints kept in Postgres (`projection_checkpoints`, migration 001): the next offset
 * to read per (projection, topic, partition), written in the same statement as the rows it covers
 * (docs/architecture.md "each projector's checkpoint … written in the same transaction as the rows it
 * covers"), so a crash never loses or doubles a row. Every checkpointed consumer
 * (lib/log/checkpointed-consumer.ts) and settlement use these.
 */
import type { Sql } from './pool.ts';

/** Identifies one checkpoint row. */
export interface CheckpointKey {
  readonly projection: string;
  readonly topic: string;
  readonly partition: number;
}

/**
 * The checkpoint upsert that every projector's one-statement write ends with, as a CTE body:
 * sets the next offset of `key`, never moving it back (a replayed or duplicated chunk leaves it
 * where it is); returns the stored offset.
 */
export function checkpointUpsert(sql: Sql, key: CheckpointKey, nextOffset: bigint) {
  return sql`
    insert into projection_checkpoints (projection, topic, "partition", "offset", updated_at)
    values (${key.projection}, ${key.topic}, ${key.partition}, ${String(nextOffset)}, now())
    on conflict (projection, topic, "partition") do update
      set "offset" = greatest(projection_checkpoints."offset", excluded."offset"), updated_at = now()
    returning "offset"`;
}

/** Stored checkpoints (next offset to read) of `projection` on `topic`, by partition. */
export async function readCheckpoints(
  sql: Sql,
  projection: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const rows = await sql<{ partition: number; offset: string }[]>`
    select "partition", "offset"::text as "offset" from projection_checkpoints
    where projection = ${projection} and topic = ${topic}`;
  return new Map(rows.map((r) => [r.partition, BigInt(r.offset)]));
}
