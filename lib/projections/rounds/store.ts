/**
 * The rounds projection's Postgres side: one atomic write per chunk holding the history rows,
 * the game-list update and the checkpoint (topic, partition, next offset) (docs/architecture.md "Postgres
 * holds read models … and each projector's checkpoint … written in the same transaction as the
 * rows it covers"). Because every part is idempotent, a retry after an ambiguous commit
 * (connection lost while the commit was in flight) or two consumers briefly owning a partition
 * during a rebalance still leave each row once and never move the game list or checkpoint back.
 */

import { isDeepStrictEqual } from 'node:util';
import { RoundRefusedError } from '../../../rules/errors.ts';
import { type CheckpointKey, checkpointUpsert } from '../../db/checkpoints.ts';
import type { Sql } from '../../db/pool.ts';
import { ROUNDS_WRITTEN_CHANNEL } from '../../db/rounds-read.ts';
import { type ProjectedEvent, projectRounds, type RoundRow, toRoundRow } from './projection.ts';

/** A decoded event at its log offset. */
export interface OffsetEvent {
  readonly offset: bigint;
  readonly event: ProjectedEvent;
}

/** Outcome of `writeChunk`. */
export interface ChunkResult {
  /** Events written by this call. */
  readonly projected: number;
  /** Rows newly inserted (fewer than `projected` when some were already stored). */
  readonly inserted: number;
  /** The stored checkpoint after commit (next offset to read); never lower than before. */
  readonly checkpoint: bigint;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Writes a chunk atomically: inserts the events' rows, moves the game list forward and sets the
 * checkpoint to `nextOffset`, as ONE statement (data-modifying CTEs run exactly once, all or
 * nothing, in the statement's implicit transaction). One statement is also one round trip, and
 * it keeps clear of postgres.js sending ROLLBACK on a transaction connection whose socket is gone,
 * which throws outside any promise and kills the process (porsager/postgres#1208).
 * Every part is idempotent (`on conflict do nothing`, `greatest`), so replaying a chunk, or
 * retrying after an ambiguous commit, changes nothing. When rows were inserted, it notifies
 * ROUNDS_WRITTEN_CHANNEL (delivered on commit only), which the API's rounds window follows.
 * `events` may be empty (a chunk of only undecodable records still moves the checkpoint).
 * @param nextOffset the offset after the last record of the chunk (decoded or not).
 * @throws the postgres.js error when the statement fails; nothing of it is then stored.
 */
export async function writeChunk(
  sql: Sql,
  key: CheckpointKey,
  events: readonly OffsetEvent[],
  nextOffset: bigint,
): Promise<ChunkResult> {
  const { rows, games } = projectRounds(events.map((e) => e.event));
  const col = <T>(f: (r: RoundRow) => T) => rows.map(f);
  // JSON goes as text[] and is cast per element: a jsonb[] parameter would make postgres.js
  // re-encode each string as a JSON string scalar.
  const [result] = await sql<{ inserted: number; checkpoint: string }[]>`
    with inserted as (
      insert into rounds (game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at)
      select game_id, round_id, game_slug, game_type, finished_at, value, extras::jsonb, proof::jsonb, appended_at
      from unnest(
        ${col((r) => r.game_id)}::int[],
        ${col((r) => String(r.round_id))}::bigint[],
        ${col((r) => r.game_slug)}::text[],
        ${col((r) => r.game_type)}::text[],
        ${col((r) => iso(r.finished_at))}::timestamptz[],
        ${col((r) => r.value)}::text[],
        ${col((r) => r.extras)}::text[],
        ${col((r) => r.proof)}::text[],
        ${col((r) => iso(r.appended_at))}::timestamptz[]
      ) as t(game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at)
      on conflict (game_id, round_id) do nothing
      returning 1
    ), listed as (
      update games g set
        last_round = greatest(g.last_round, u.last_round),
        last_update = greatest(g.last_update, u.last_update)
      from unnest(
        ${games.map((u) => u.game_id)}::int[],
        ${games.map((u) => String(u.last_round))}::bigint[],
        ${games.map((u) => iso(u.last_update))}::timestamptz[]
      ) as u(game_id, last_round, last_update)
      where g.id = u.game_id
      returning 1
    ), checkpoint as (
      ${checkpointUpsert(sql, key, nextOffset)}
    ), notified as (
      select pg_notify(${ROUNDS_WRITTEN_CHANNEL}, current_schema()) where exists (select from inserted)
    )
    select (select count(*) from inserted)::int as inserted, (select "offset"::text from checkpoint) as checkpoint,
      (select count(*) from notified)::int as notified`;
  return {
    projected: events.length,
    inserted: result?.inserted ?? 0,
    checkpoint: BigInt(result?.checkpoint ?? nextOffset),
  };
}

/** Whether two rows of one round id say the same round (JSON compared as values: jsonb reorders keys). */
function sameRound(a: Pick<RoundRow, 'finished_at' | 'value' | 'extras' | 'proof'>, b: typeof a): boolean {
  return (
    a.finished_at === b.finished_at &&
    a.value === b.value &&
    isDeepStrictEqual(JSON.parse(a.extras), JSON.parse(b.extras)) &&
    isDeepStrictEqual(
      a.proof === null ? null : JSON.parse(a.proof),
      b.proof === null ? null : JSON.parse(b.proof),
    )
  );
}

/**
 * Refuses a chunk holding a round id already stored, or earlier in the chunk, with other content
 * (rules/rounds/admission.ts `conflict`: the first one stays), so the checkpointed consumer writes
 * the chunk's records one at a time and dead-letters that record with the reason. The same content
 * again (a replay, a producer's retry) is a duplicate and passes (`on conflict do nothing`). Only
 * ids at or below a game's `last_round` can be stored already, so an ordinary chunk of new rounds
 * costs one read of the game list.
 * @throws RoundRefusedError (`conflict`) naming the round id.
 * @throws the postgres.js error of a failed read.
 */
export async function refuseConflicts(sql: Sql, events: readonly OffsetEvent[]): Promise<void> {
  if (events.length === 0) return;
  // Rows are built only for ids met twice in the chunk or possibly stored: a chunk of new rounds
  // costs a pass over its ids and the game-list read.
  const firsts = new Map<string, OffsetEvent>();
  for (const e of events) {
    const r = e.event.round;
    const k = `${r.game_id}:${r.round_id}`;
    const prior = firsts.get(k);
    if (prior === undefined) firsts.set(k, e);
    else if (!sameRound(toRoundRow(prior.event), toRoundRow(e.event))) throw conflict(r.round_id);
  }
  const games = await sql<
    { id: number; last_round: string | null }[]
  >`select id, last_round::text from games`;
  const last = new Map(games.map((g) => [g.id, g.last_round === null ? -1 : Number(g.last_round)]));
  const candidates = [...firsts.values()]
    .map((e) => e.event.round)
    .filter((r) => r.round_id <= (last.get(r.game_id) ?? -1));
  if (candidates.length === 0) return;
  const stored = await sql<
    { game_id: number; round_id: string; finished_at: Date; value: string; extras: unknown; proof: unknown }[]
  >`
    select r.game_id, r.round_id::text, r.finished_at, r.value, r.extras, r.proof from rounds r
    join unnest(${candidates.map((c) => c.game_id)}::int[], ${candidates.map((c) => String(c.round_id))}::bigint[])
      as c(game_id, round_id) on r.game_id = c.game_id and r.round_id = c.round_id`;
  for (const s of stored) {
    const first = firsts.get(`${s.game_id}:${s.round_id}`);
    if (!first) continue;
    const asStored = {
      finished_at: s.finished_at.getTime(),
      value: s.value,
      extras: JSON.stringify(s.extras),
      proof: s.proof === null ? null : JSON.stringify(s.proof),
    };
    if (!sameRound(asStored, toRoundRow(first.event))) throw conflict(first.event.round.round_id);
  }
}

const conflict = (roundId: number) =>
  new RoundRefusedError('conflict', `round ${roundId} is stored with other content; the first one stays`);
