/**
 * The write of one settlement step (migrations 005, 007, 009): ONE transaction holding the changed
 * bets, new rounds, closes and cash-outs, outbox entries added and confirmed, and the checkpoint
 * (the one-statement pattern of lib/projections/rounds/store.ts), behind the fence of
 * ownership.ts.
 */
import { type CheckpointKey, checkpointUpsert } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { FinishedRound } from '../../rules/bets/settle.ts';
import type { BetCashedOut } from '../../rules/rounds/round.ts';
import { StaleBetError, StaleOwnerError } from './errors.ts';
import { lockEpochs, staleIn } from './ownership.ts';
import type { Emitted, OutboxId } from './step.ts';
import type { CloseRow, StoredBet } from './store.ts';

/** A bet state to store, with its wallet partition and the version of its row it was computed from (0: new). */
export type BetWrite = StoredBet;

/** An event to add to the outbox, with the wallet partition it is appended to (its bet's). */
export type OutboxWrite = Emitted & { readonly partition: number };

/** What one batch writes. */
export interface BatchWrite {
  readonly bets: ReadonlyMap<number, BetWrite>;
  readonly rounds: readonly FinishedRound[];
  readonly emitted: readonly OutboxWrite[];
  readonly confirmed: readonly OutboxId[];
  readonly closes?: readonly CloseRow[];
  readonly cashOuts?: readonly BetCashedOut[];
  /** The epoch this instance claimed of every wallet partition the write decides for. */
  readonly fence: ReadonlyMap<number, bigint>;
}

/**
 * Writes a batch and, given `checkpoint`, moves it to its `next` offset, in ONE transaction (all
 * or nothing) behind the fence: the rows of the fenced partitions are held FOR SHARE and must still
 * be at the given epochs, and every bet row must still be at the version it was read at.
 * Idempotent: rounds and outbox entries `on conflict do nothing`, the checkpoint never moves back.
 * @throws StaleOwnerError when a fenced partition was claimed by another instance since;
 *   StaleBetError when a bet row changed since it was read; the postgres.js error otherwise.
 *   Nothing is stored in any of these cases.
 */
export async function writeBatch(
  sql: Sql,
  w: BatchWrite,
  checkpoint?: { readonly key: CheckpointKey; readonly next: bigint },
): Promise<void> {
  await sql.begin(async (tx) => {
    const stale = staleIn(w.fence, await lockEpochs(tx as unknown as Sql, w.fence.keys()));
    if (stale.length > 0) throw new StaleOwnerError(new Map(stale.map((p) => [p, w.fence.get(p) ?? -1n])));
    const [row] = await writeRows(tx as unknown as Sql, w, checkpoint);
    const n = Number(row?.n ?? 0);
    if (n !== w.bets.size) throw new StaleBetError(w.bets.size, n);
  });
}

function writeRows(sql: Sql, w: BatchWrite, cp?: { readonly key: CheckpointKey; readonly next: bigint }) {
  const bets = [...w.bets.entries()];
  const out = w.emitted;
  const closes = w.closes ?? [];
  const cashOuts = w.cashOuts ?? [];
  return sql<{ n: string }[]>`
    with bets as (
      insert into settlement_bets (tx_id, game, round_id, status, state, wallet_partition, version, updated_at)
      select tx_id, game, round_id, status, state::jsonb, part, read_version + 1, now()
      from unnest(
        ${bets.map(([id]) => String(id))}::bigint[],
        ${bets.map(([, b]) => b.state.placed.bet.game)}::text[],
        ${bets.map(([, b]) => String(b.state.placed.bet.round_id))}::bigint[],
        ${bets.map(([, b]) => b.state.status)}::text[],
        ${bets.map(([, b]) => JSON.stringify(b.state))}::text[],
        ${bets.map(([, b]) => b.partition)}::int[],
        ${bets.map(([, b]) => String(b.version))}::bigint[]
      ) as t(tx_id, game, round_id, status, state, part, read_version)
      on conflict (tx_id) do update set status = excluded.status, state = excluded.state,
        wallet_partition = excluded.wallet_partition, version = excluded.version, updated_at = now()
      where settlement_bets.version = excluded.version - 1
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
      insert into settlement_outbox (type, tx_id, key, value, wallet_partition)
      select type, tx_id, key, decode(value, 'hex'), part
      from unnest(
        ${out.map((e) => e.event.type)}::text[],
        ${out.map((e) => String(e.event.value.tx_id))}::bigint[],
        ${out.map((e) => e.key)}::text[],
        ${out.map((e) => e.value.toString('hex'))}::text[],
        ${out.map((e) => e.partition)}::int[]
      ) as t(type, tx_id, key, value, part)
      on conflict do nothing
      returning 1
    ), confirmed as (
      delete from settlement_outbox o
      using unnest(${w.confirmed.map((c) => c.type)}::text[], ${w.confirmed.map((c) => String(c.tx_id))}::bigint[])
        as c(type, tx_id)
      where o.type = c.type and o.tx_id = c.tx_id
      returning 1
    )${cp ? sql`, checkpoint as (${checkpointUpsert(sql, cp.key, cp.next)})` : sql``}
    select (select count(*) from bets) as n`;
}
