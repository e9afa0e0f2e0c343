/**
 * One batch of settlement against Postgres: load the bet states and rounds the records touch, step
 * them (step.ts, pure) and write the result with the checkpoint (store.ts, one statement).
 * Returns the events to append after the commit. Safe to call again with the same records after a
 * failure: nothing is stored unless the whole write commits.
 */

import type { CheckpointKey } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { WalletEvent } from '../../lib/log/wallet-events.ts';
import { betTxIdOf, type FinishedRound } from '../../rules/bets/settle.ts';
import { type Emitted, roundKey, stepRounds, stepWallet } from './step.ts';
import { loadBets, loadOpenBets, loadRounds, pruneRounds, writeBatch } from './store.ts';

/**
 * Settles wallet events (log order) of one partition; `now` is the `at` of appended events (Unix ms).
 * @throws the postgres.js error of a failed read or write.
 */
export async function settleWalletBatch(
  sql: Sql,
  key: CheckpointKey,
  events: readonly WalletEvent[],
  next: bigint,
  now: number,
): Promise<Emitted[]> {
  const bets = await loadBets(sql, [...new Set(events.map(betTxIdOf))]);
  const wanted = new Map<string, { game: string; round_id: number }>();
  const contexts = [
    ...events.flatMap((e) => (e.type === 'BetPlaced' ? [e.value.bet] : [])),
    ...[...bets.values()].map((s) => s.placed.bet),
  ];
  for (const b of contexts) wanted.set(roundKey(b.game, b.round_id), { game: b.game, round_id: b.round_id });
  const result = stepWallet(events, bets, await loadRounds(sql, [...wanted.values()]), now);
  await writeBatch(sql, key, { bets: result.changed, rounds: [], ...result }, next);
  return result.emitted;
}

/**
 * Settles the open bets of finished rounds of one partition and stores the rounds.
 * @throws the postgres.js error of a failed read or write.
 */
export async function settleRoundsBatch(
  sql: Sql,
  key: CheckpointKey,
  rounds: readonly FinishedRound[],
  next: bigint,
  now: number,
): Promise<Emitted[]> {
  const open = await loadOpenBets(
    sql,
    rounds.map((r) => ({ game: r.game_slug, round_id: r.round_id })),
  );
  const result = stepRounds(rounds, open, now);
  await writeBatch(sql, key, { bets: result.changed, rounds, ...result }, next);
  if (rounds.length > 0) await pruneRounds(sql, [...new Set(rounds.map((r) => r.game_slug))]);
  return result.emitted;
}
