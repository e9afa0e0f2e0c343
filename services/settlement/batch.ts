/**
 * One batch of settlement against Postgres: load the bet states, rounds, closes and cash-outs the
 * records touch, step them (step.ts, pure) and write the result with the checkpoint (store.ts, one
 * statement). Returns the events to append after the commit. Safe to call again with the same
 * records after a failure: nothing is stored unless the whole write commits.
 */
import type { CheckpointKey } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { betTxIdOf, type FinishedRound } from '../../rules/bets/settle.ts';
import type { BetCashedOut } from '../../rules/rounds/round.ts';
import { type Emitted, roundKey, stepRounds, stepWallet, type TimedWalletEvent } from './step.ts';
import {
  type CloseRow,
  loadBets,
  loadCashOuts,
  loadCloses,
  loadOpenBets,
  loadRounds,
  pruneRounds,
  writeBatch,
} from './store.ts';

/**
 * Settles wallet events (log order, with their broker append times) of one partition; `now` is
 * the `at` of appended events (Unix ms).
 * @throws the postgres.js error of a failed read or write.
 */
export async function settleWalletBatch(
  sql: Sql,
  key: CheckpointKey,
  events: readonly TimedWalletEvent[],
  next: bigint,
  now: number,
): Promise<Emitted[]> {
  const ids = [...new Set(events.map((e) => betTxIdOf(e.event)))];
  const bets = await loadBets(sql, ids);
  const wanted = new Map<string, { game: string; round_id: number }>();
  const contexts = [
    ...events.flatMap(({ event: e }) => (e.type === 'BetPlaced' ? [e.value.bet] : [])),
    ...[...bets.values()].map((s) => s.placed.bet),
  ];
  for (const b of contexts) wanted.set(roundKey(b.game, b.round_id), { game: b.game, round_id: b.round_id });
  const [rounds, cashOuts] = await Promise.all([
    loadRounds(sql, [...wanted.values()]),
    loadCashOuts(sql, ids),
  ]);
  const result = stepWallet(events, bets, rounds, cashOuts, now);
  await writeBatch(sql, key, { bets: result.changed, rounds: [], ...result }, next);
  return result.emitted;
}

/** The records of `rounds` settlement reads: lifecycle closes, cash-out decisions, finished rounds. */
export interface RoundsInput {
  readonly finished: readonly FinishedRound[];
  readonly closes: readonly CloseRow[];
  readonly cashOuts: readonly BetCashedOut[];
}

/**
 * Keeps the closes and cash-outs of one partition and settles the open bets of its finished rounds
 * (each with the append time of its BettingClosed, read in this batch or before).
 * @throws the postgres.js error of a failed read or write.
 */
export async function settleRoundsBatch(
  sql: Sql,
  key: CheckpointKey,
  input: RoundsInput,
  next: bigint,
  now: number,
): Promise<Emitted[]> {
  const ids = input.finished.map((r) => ({ game: r.game_slug, round_id: r.round_id }));
  const batchCloses = new Map(input.closes.map((c) => [roundKey(c.game, c.round_id), c.closed_at]));
  const stored = await loadCloses(sql, ids);
  const rounds = input.finished.map((r) => {
    const k = roundKey(r.game_slug, r.round_id);
    return { ...r, bettingClosedAt: batchCloses.get(k) ?? stored.get(k) ?? null };
  });
  const open = await loadOpenBets(sql, ids);
  const cashOuts = await loadCashOuts(sql, [...open.keys()]);
  for (const c of input.cashOuts) cashOuts.set(c.tx_id, c.multiplier);
  const result = stepRounds(rounds, open, cashOuts, now);
  await writeBatch(
    sql,
    key,
    { bets: result.changed, rounds, ...result, closes: input.closes, cashOuts: input.cashOuts },
    next,
  );
  if (rounds.length > 0) await pruneRounds(sql, [...new Set(rounds.map((r) => r.game_slug))]);
  return result.emitted;
}
