/**
 * Postgres side of settlement (migration 005): loading bet states and recent rounds, and one
 * atomic statement per batch holding the changed bets, new rounds, outbox entries added and
 * confirmed, and the checkpoint (same one-statement pattern and reasons as
 * services/projector/rounds/store.ts).
 */

import { type CheckpointKey, checkpointUpsert } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { BetState, FinishedRound } from '../../rules/bets/settle.ts';
import type { RoundResult } from '../../rules/rounds/round.ts';
import { type Emitted, type OutboxId, roundKey } from './step.ts';

/** Name of settlement's rows in projection_checkpoints. */
export const SETTLEMENT_PROJECTION = 'settlement';
/** Rounds kept per game, measured back from the newest finished_at (ms): 6 h. */
export const ROUND_RETENTION_MS = 6 * 3600 * 1000;

const toState = (j: unknown): BetState => (typeof j === 'string' ? JSON.parse(j) : j) as BetState;

/** States of the bets `txIds` that exist. */
export async function loadBets(sql: Sql, txIds: readonly number[]): Promise<Map<number, BetState>> {
  if (txIds.length === 0) return new Map();
  const rows = await sql<{ tx_id: string; state: unknown }[]>`
    select tx_id::text, state from settlement_bets where tx_id = any(${txIds.map(String)}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.tx_id), toState(r.state)]));
}

/** Open (placed or counted) bets on the given rounds. */
export async function loadOpenBets(
  sql: Sql,
  rounds: readonly { game: string; round_id: number }[],
): Promise<Map<number, BetState>> {
  if (rounds.length === 0) return new Map();
  const rows = await sql<{ tx_id: string; state: unknown }[]>`
    select b.tx_id::text, b.state from settlement_bets b
    join unnest(${rounds.map((r) => r.game)}::text[], ${rounds.map((r) => String(r.round_id))}::bigint[])
      as r(game, round_id) on b.game = r.game and b.round_id = r.round_id
    where b.status in ('placed', 'counted')`;
  return new Map(rows.map((r) => [Number(r.tx_id), toState(r.state)]));
}

/** Finished rounds among `wanted` (by roundKey). */
export async function loadRounds(
  sql: Sql,
  wanted: readonly { game: string; round_id: number }[],
): Promise<Map<string, FinishedRound>> {
  if (wanted.length === 0) return new Map();
  const rows = await sql<{ game: string; round_id: string; finished_at: string; result: unknown }[]>`
    select s.game, s.round_id::text, s.finished_at::text, s.result from settlement_rounds s
    join unnest(${wanted.map((r) => r.game)}::text[], ${wanted.map((r) => String(r.round_id))}::bigint[])
      as r(game, round_id) on s.game = r.game and s.round_id = r.round_id`;
  return new Map(
    rows.map((r) => [
      roundKey(r.game, Number(r.round_id)),
      {
        game_slug: r.game as FinishedRound['game_slug'],
        round_id: Number(r.round_id),
        finished_at: Number(r.finished_at),
        result: (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as RoundResult,
      },
    ]),
  );
}

/** What one batch writes. */
export interface BatchWrite {
  readonly bets: ReadonlyMap<number, BetState>;
  readonly rounds: readonly FinishedRound[];
  readonly emitted: readonly Emitted[];
  readonly confirmed: readonly OutboxId[];
}

/**
 * Writes a batch and moves the checkpoint of `key` to `nextOffset`, as ONE statement (all or
 * nothing). Idempotent: rounds and outbox entries `on conflict do nothing`, bet states replaced by
 * the state computed from the same records, the checkpoint never moves back.
 * @throws the postgres.js error; nothing is then stored.
 */
export async function writeBatch(
  sql: Sql,
  key: CheckpointKey,
  w: BatchWrite,
  nextOffset: bigint,
): Promise<void> {
  const bets = [...w.bets.entries()];
  const out = w.emitted;
  await sql`
    with bets as (
      insert into settlement_bets (tx_id, game, round_id, status, state, updated_at)
      select tx_id, game, round_id, status, state::jsonb, now()
      from unnest(
        ${bets.map(([id]) => String(id))}::bigint[],
        ${bets.map(([, s]) => s.placed.bet.game)}::text[],
        ${bets.map(([, s]) => String(s.placed.bet.round_id))}::bigint[],
        ${bets.map(([, s]) => s.status)}::text[],
        ${bets.map(([, s]) => JSON.stringify(s))}::text[]
      ) as t(tx_id, game, round_id, status, state)
      on conflict (tx_id) do update set status = excluded.status, state = excluded.state, updated_at = now()
      returning 1
    ), rounds as (
      insert into settlement_rounds (game, round_id, finished_at, result)
      select game, round_id, finished_at, result::jsonb from unnest(
        ${w.rounds.map((r) => r.game_slug)}::text[],
        ${w.rounds.map((r) => String(r.round_id))}::bigint[],
        ${w.rounds.map((r) => String(r.finished_at))}::bigint[],
        ${w.rounds.map((r) => JSON.stringify(r.result))}::text[]
      ) as t(game, round_id, finished_at, result)
      on conflict do nothing
      returning 1
    ), added as (
      insert into settlement_outbox (type, tx_id, key, value)
      select type, tx_id, key, decode(value, 'hex')
      from unnest(
        ${out.map((e) => e.event.type)}::text[],
        ${out.map((e) => String(e.event.value.tx_id))}::bigint[],
        ${out.map((e) => e.key)}::text[],
        ${out.map((e) => e.value.toString('hex'))}::text[]
      ) as t(type, tx_id, key, value)
      on conflict do nothing
      returning 1
    ), confirmed as (
      delete from settlement_outbox o
      using unnest(${w.confirmed.map((c) => c.type)}::text[], ${w.confirmed.map((c) => String(c.tx_id))}::bigint[])
        as c(type, tx_id)
      where o.type = c.type and o.tx_id = c.tx_id
      returning 1
    ), checkpoint as (
      ${checkpointUpsert(sql, key, nextOffset)}
    )
    select (select count(*) from bets) as n`;
}

/** One outbox entry: an appended (or to-be-appended) event, encoded. */
export interface OutboxRow extends OutboxId {
  readonly key: string;
  readonly value: Buffer;
}

/** Every outbox entry, oldest first. */
export async function readOutbox(sql: Sql): Promise<OutboxRow[]> {
  const rows = await sql<{ type: OutboxRow['type']; tx_id: string; key: string; value: Buffer }[]>`
    select type, tx_id::text, key, value from settlement_outbox order by created_at, tx_id, type`;
  return rows.map((r) => ({ type: r.type, tx_id: Number(r.tx_id), key: r.key, value: r.value }));
}

/** Removes the given outbox entries (found in the log). */
export async function deleteOutbox(sql: Sql, ids: readonly OutboxId[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    delete from settlement_outbox o
    using unnest(${ids.map((c) => c.type)}::text[], ${ids.map((c) => String(c.tx_id))}::bigint[]) as c(type, tx_id)
    where o.type = c.type and o.tx_id = c.tx_id`;
}

/** Drops rounds older than ROUND_RETENTION_MS before the newest one of their game. */
export async function pruneRounds(sql: Sql, games: readonly string[]): Promise<void> {
  if (games.length === 0) return;
  await sql`
    delete from settlement_rounds s
    using (select game, max(finished_at) as newest from settlement_rounds
           where game = any(${[...games]}::text[]) group by game) m
    where s.game = m.game and s.finished_at < m.newest - ${ROUND_RETENTION_MS}`;
}
