/**
 * Postgres side of settlement (migrations 005, 007, 009): loading bet states (with the wallet
 * partition and row version of each), recent rounds, closes and cash-outs, and the outbox. The
 * write of a batch is write.ts.
 */

import type { Sql } from '../../lib/db/pool.ts';
import type { BetState, FinishedRound } from '../../rules/bets/settle.ts';
import type { RoundResult } from '../../rules/rounds/round.ts';
import { type OutboxId, roundKey } from './step.ts';

/** Name of settlement's rows in projection_checkpoints. */
export const SETTLEMENT_PROJECTION = 'settlement';
/** Rounds kept per game, measured back from the newest finished_at (ms): 6 h. */
export const ROUND_RETENTION_MS = 6 * 3600 * 1000;

const toState = (j: unknown): BetState => (typeof j === 'string' ? JSON.parse(j) : j) as BetState;

/** A stored bet: its state, its wallet partition and the version of its row that was read. */
export interface StoredBet {
  readonly state: BetState;
  readonly partition: number;
  /** 0 for a bet not stored yet. */
  readonly version: number;
}

type BetRow = { tx_id: string; state: unknown; wallet_partition: number | null; version: string };
const stored = (rows: readonly BetRow[]): Map<number, StoredBet> =>
  new Map(
    rows.map((r) => [
      Number(r.tx_id),
      // A row from before migration 009 not filled in yet (backfillPartitions): -1 is no partition.
      { state: toState(r.state), partition: r.wallet_partition ?? -1, version: Number(r.version) },
    ]),
  );

/** The bets `txIds` that exist. */
export async function loadBets(sql: Sql, txIds: readonly number[]): Promise<Map<number, StoredBet>> {
  if (txIds.length === 0) return new Map();
  const rows = await sql<BetRow[]>`
    select tx_id::text, state, wallet_partition, version::text from settlement_bets
    where tx_id = any(${txIds.map(String)}::bigint[])`;
  return stored(rows);
}

/** Open (placed or counted) bets of the wallet `partitions` on the given rounds. */
export async function loadOpenBets(
  sql: Sql,
  rounds: readonly { game: string; round_id: number }[],
  partitions: readonly number[],
): Promise<Map<number, StoredBet>> {
  if (rounds.length === 0 || partitions.length === 0) return new Map();
  const rows = await sql<BetRow[]>`
    select b.tx_id::text, b.state, b.wallet_partition, b.version::text from settlement_bets b
    join unnest(${rounds.map((r) => r.game)}::text[], ${rounds.map((r) => String(r.round_id))}::bigint[])
      as r(game, round_id) on b.game = r.game and b.round_id = r.round_id
    where b.status in ('placed', 'counted') and b.wallet_partition = any(${[...partitions]}::int[])`;
  return stored(rows);
}

/** Open bets of the wallet `partitions` whose round settlement has stored as finished. */
export async function loadSettleableBets(
  sql: Sql,
  partitions: readonly number[],
): Promise<Map<number, StoredBet>> {
  if (partitions.length === 0) return new Map();
  const rows = await sql<BetRow[]>`
    select b.tx_id::text, b.state, b.wallet_partition, b.version::text from settlement_bets b
    where b.status in ('placed', 'counted') and b.wallet_partition = any(${[...partitions]}::int[])
      and exists (select 1 from settlement_rounds r where r.game = b.game and r.round_id = b.round_id)`;
  return stored(rows);
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

/** One outbox entry: an appended (or to-be-appended) event, encoded, with its wallet partition. */
export interface OutboxRow extends OutboxId {
  readonly key: string;
  readonly value: Buffer;
  /** -1 for an entry from before migration 009 not filled in yet (backfillPartitions). */
  readonly partition: number;
}

/** The outbox entries of the wallet `partitions` (every entry when not given), oldest first. */
export async function readOutbox(sql: Sql, partitions?: readonly number[]): Promise<OutboxRow[]> {
  const rows = await sql<
    { type: OutboxRow['type']; tx_id: string; key: string; value: Buffer; wallet_partition: number | null }[]
  >`
    select type, tx_id::text, key, value, wallet_partition from settlement_outbox
    ${partitions ? sql`where wallet_partition = any(${[...partitions]}::int[])` : sql``}
    order by created_at, tx_id, type`;
  return rows.map((r) => ({
    type: r.type,
    tx_id: Number(r.tx_id),
    key: r.key,
    value: r.value,
    partition: r.wallet_partition ?? -1,
  }));
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
