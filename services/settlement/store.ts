/**
 * Postgres side of settlement (migration 005): loading bet states and recent rounds, and one
 * atomic statement per batch holding the changed bets, new rounds, outbox entries added and
 * confirmed, and the checkpoint (same one-statement pattern and reasons as
 * services/projector/rounds/store.ts).
 */

import { type CheckpointKey, checkpointUpsert } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { BetState, FinishedRound } from '../../rules/bets/settle.ts';
import type { BetCashedOut, RoundResult } from '../../rules/rounds/round.ts';
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

/** Finished rounds among `wanted` (by roundKey), with the append time of their BettingClosed when known. */
export async function loadRounds(
  sql: Sql,
  wanted: readonly { game: string; round_id: number }[],
): Promise<Map<string, FinishedRound>> {
  if (wanted.length === 0) return new Map();
  const rows = await sql<
    { game: string; round_id: string; finished_at: string; result: unknown; closed_at: string | null }[]
  >`
    select s.game, s.round_id::text, s.finished_at::text, s.result, c.closed_at::text from settlement_rounds s
    join unnest(${wanted.map((r) => r.game)}::text[], ${wanted.map((r) => String(r.round_id))}::bigint[])
      as r(game, round_id) on s.game = r.game and s.round_id = r.round_id
    left join settlement_closes c on c.game = s.game and c.round_id = s.round_id`;
  return new Map(
    rows.map((r) => [
      roundKey(r.game, Number(r.round_id)),
      {
        game_slug: r.game as FinishedRound['game_slug'],
        round_id: Number(r.round_id),
        finished_at: Number(r.finished_at),
        result: (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as RoundResult,
        bettingClosedAt: r.closed_at === null ? null : Number(r.closed_at),
      },
    ]),
  );
}

/** Append times of the BettingClosed of `wanted` rounds that settlement has read, by roundKey. */
export async function loadCloses(
  sql: Sql,
  wanted: readonly { game: string; round_id: number }[],
): Promise<Map<string, number>> {
  if (wanted.length === 0) return new Map();
  const rows = await sql<{ game: string; round_id: string; closed_at: string }[]>`
    select c.game, c.round_id::text, c.closed_at::text from settlement_closes c
    join unnest(${wanted.map((r) => r.game)}::text[], ${wanted.map((r) => String(r.round_id))}::bigint[])
      as r(game, round_id) on c.game = r.game and c.round_id = r.round_id`;
  return new Map(rows.map((r) => [roundKey(r.game, Number(r.round_id)), Number(r.closed_at)]));
}

/** The manual cash-outs (multipliers) of the bets `txIds` that have one. */
export async function loadCashOuts(sql: Sql, txIds: readonly number[]): Promise<Map<number, string>> {
  if (txIds.length === 0) return new Map();
  const rows = await sql<{ tx_id: string; multiplier: string }[]>`
    select tx_id::text, multiplier from settlement_cash_outs where tx_id = any(${txIds.map(String)}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.tx_id), r.multiplier]));
}

/** A round's BettingClosed as settlement keeps it. */
export interface CloseRow {
  readonly game: string;
  readonly round_id: number;
  /** Broker append time, Unix ms. */
  readonly closed_at: number;
}

/** What one batch writes. */
export interface BatchWrite {
  readonly bets: ReadonlyMap<number, BetState>;
  readonly rounds: readonly FinishedRound[];
  readonly emitted: readonly Emitted[];
  readonly confirmed: readonly OutboxId[];
  readonly closes?: readonly CloseRow[];
  readonly cashOuts?: readonly BetCashedOut[];
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
  const closes = w.closes ?? [];
  const cashOuts = w.cashOuts ?? [];
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
    ), closes as (
      insert into settlement_closes (game, round_id, closed_at)
      select * from unnest(
        ${closes.map((c) => c.game)}::text[],
        ${closes.map((c) => String(c.round_id))}::bigint[],
        ${closes.map((c) => String(c.closed_at))}::bigint[]
      )
      on conflict do nothing
      returning 1
    ), cash_outs as (
      insert into settlement_cash_outs (tx_id, game, round_id, multiplier, decided_at)
      select * from unnest(
        ${cashOuts.map((c) => String(c.tx_id))}::bigint[],
        ${cashOuts.map((c) => c.game_slug)}::text[],
        ${cashOuts.map((c) => String(c.round_id))}::bigint[],
        ${cashOuts.map((c) => c.multiplier)}::text[],
        ${cashOuts.map((c) => String(c.at))}::bigint[]
      )
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

/** Drops rounds (and their closes) older than ROUND_RETENTION_MS before the newest one of their game. */
export async function pruneRounds(sql: Sql, games: readonly string[]): Promise<void> {
  if (games.length === 0) return;
  await sql`
    delete from settlement_rounds s
    using (select game, max(finished_at) as newest from settlement_rounds
           where game = any(${[...games]}::text[]) group by game) m
    where s.game = m.game and s.finished_at < m.newest - ${ROUND_RETENTION_MS}`;
  await sql`
    delete from settlement_closes c
    using (select game, max(closed_at) as newest from settlement_closes
           where game = any(${[...games]}::text[]) group by game) m
    where c.game = m.game and c.closed_at < m.newest - ${ROUND_RETENTION_MS}`;
}
