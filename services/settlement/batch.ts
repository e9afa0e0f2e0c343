/**
 * One step of settlement against Postgres: load the bet states, rounds, closes and cash-outs the
 * records touch, step them (step.ts, pure) and write the result behind the fence (store.ts, one
 * transaction). Returns the events to append after the commit, each with its wallet partition and
 * the epoch it was decided at (ownership.ts). Safe to call again with the same records after a
 * failure: nothing is stored unless the whole write commits.
 */
import pRetry from 'p-retry';
import type { CheckpointKey } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { betTxIdOf, type FinishedRound } from '../../rules/bets/settle.ts';
import type { BetCashedOut } from '../../rules/rounds/round.ts';
import { StaleBetError, StaleOwnerError } from './errors.ts';
import type { Ownership, Sendable } from './ownership.ts';
import { roundKey, type StepResult, stepRounds, stepWallet, type TimedWalletEvent } from './step.ts';
import {
  type CloseRow,
  loadBets,
  loadCashOuts,
  loadCloses,
  loadOpenBets,
  loadRounds,
  loadSettleableBets,
  pruneRounds,
  type StoredBet,
} from './store.ts';
import { type BetWrite, writeBatch } from './write.ts';

/** Epoch of each wallet partition this instance claimed. */
type Epochs = ReadonlyMap<number, bigint>;

const statesOf = (bets: ReadonlyMap<number, StoredBet>) => new Map([...bets].map(([id, b]) => [id, b.state]));

/**
 * The rows a step result writes: each changed bet with its partition and the version it was read
 * at, the outbox entries with their partitions, and the fence (the epoch of each partition).
 * @throws StaleOwnerError for a changed bet of a partition this instance has not claimed.
 */
function fenced(
  result: StepResult,
  bets: ReadonlyMap<number, StoredBet>,
  partitionOf: (txId: number) => number,
  epochs: Epochs,
) {
  const writes = new Map<number, BetWrite>();
  const fence = new Map<number, bigint>();
  for (const [id, state] of result.changed) {
    const partition = partitionOf(id);
    const epoch = epochs.get(partition);
    if (epoch === undefined) throw new StaleOwnerError(new Map([[partition, -1n]]));
    writes.set(id, { state, partition, version: bets.get(id)?.version ?? 0 });
    fence.set(partition, epoch);
  }
  const emitted = result.emitted.map((e) => ({ ...e, partition: partitionOf(betTxIdOf(e.event)) }));
  const sendable = (): Sendable[] => emitted.map((e) => ({ ...e, epoch: fence.get(e.partition) as bigint }));
  return { writes, fence, emitted, sendable };
}

/**
 * Settles wallet events (log order, with their broker append times) of the wallet partition
 * `key.partition`, which this instance claimed at `epoch`; `now` is the `at` of appended events
 * (Unix ms).
 * @throws StaleOwnerError when the partition was claimed by another instance since, StaleBetError
 *   when a bet row changed under the step, the postgres.js error of a failed read or write.
 */
export async function settleWalletBatch(
  sql: Sql,
  key: CheckpointKey,
  events: readonly TimedWalletEvent[],
  next: bigint,
  now: number,
  epoch: bigint,
): Promise<Sendable[]> {
  const ids = [...new Set(events.map((e) => betTxIdOf(e.event)))];
  const bets = await loadBets(sql, ids);
  const wanted = new Map<string, { game: string; round_id: number }>();
  const contexts = [
    ...events.flatMap(({ event: e }) => (e.type === 'BetPlaced' ? [e.value.bet] : [])),
    ...[...bets.values()].map((s) => s.state.placed.bet),
  ];
  for (const b of contexts) wanted.set(roundKey(b.game, b.round_id), { game: b.game, round_id: b.round_id });
  const [rounds, cashOuts] = await Promise.all([
    loadRounds(sql, [...wanted.values()]),
    loadCashOuts(sql, ids),
  ]);
  const result = stepWallet(events, statesOf(bets), rounds, cashOuts, now);
  const w = fenced(result, bets, () => key.partition, new Map([[key.partition, epoch]]));
  // The checkpoint and the confirmations are the partition's too: fenced even when no bet changed.
  w.fence.set(key.partition, epoch);
  await writeBatch(
    sql,
    { bets: w.writes, rounds: [], emitted: w.emitted, confirmed: result.confirmed, fence: w.fence },
    { key, next },
  );
  return w.sendable();
}

/** The records of `rounds` settlement reads: lifecycle closes, cash-out decisions, finished rounds. */
export interface RoundsInput {
  readonly finished: readonly FinishedRound[];
  readonly closes: readonly CloseRow[];
  readonly cashOuts: readonly BetCashedOut[];
}

/** A round's content as compared between two records of its id (result keys sorted: jsonb reorders them). */
const contentOf = (r: Pick<FinishedRound, 'finished_at' | 'result'>): string =>
  `${r.finished_at}:${JSON.stringify(r.result, Object.keys(r.result).sort())}`;

/**
 * Keeps the closes and cash-outs of one `rounds` partition and settles the open bets of its
 * finished rounds (each with the append time of its BettingClosed, read in this batch or before)
 * that belong to the wallet partitions of `epochs`.
 *
 * The first record of a round id stays (rules/rounds/admission.ts): a second one in the batch is
 * dropped, and one whose content differs from the round already stored (a `conflict`) settles
 * nothing; each is reported to `refused` (`duplicate` or `conflict`). A record of the stored
 * content is settled again (a re-read after a restart finds bets still open).
 * @throws StaleOwnerError naming the partitions claimed by another instance since, StaleBetError
 *   when a bet row changed under the step, the postgres.js error of a failed read or write.
 */
export async function settleRoundsBatch(
  sql: Sql,
  key: CheckpointKey,
  input: RoundsInput,
  next: bigint,
  now: number,
  epochs: Epochs,
  refused: (reason: 'duplicate' | 'conflict') => void = () => {},
): Promise<Sendable[]> {
  const known = await loadRounds(
    sql,
    input.finished.map((r) => ({ game: r.game_slug, round_id: r.round_id })),
  );
  const firsts = new Map<string, (typeof input.finished)[number]>();
  for (const r of input.finished) {
    const k = roundKey(r.game_slug, r.round_id);
    const prior = firsts.get(k) ?? known.get(k);
    if (prior && contentOf(prior) !== contentOf(r)) {
      refused('conflict');
      continue;
    }
    if (firsts.has(k)) {
      refused('duplicate');
      continue;
    }
    firsts.set(k, r);
  }
  const finished = [...firsts.values()];
  const ids = finished.map((r) => ({ game: r.game_slug, round_id: r.round_id }));
  // A round's close is its first BettingClosed on the log. A second copy (a re-send whose first
  // landing the engine did not see, another producer's record) must not reopen the window: the API
  // answers a bet appended between the two 409 (lib/log/round-phases.ts keeps the earliest). The
  // earliest of this batch's copies and the stored one.
  const stored = await loadCloses(sql, ids);
  const closesAt = new Map(stored);
  for (const c of input.closes) {
    const k = roundKey(c.game, c.round_id);
    const known = closesAt.get(k);
    if (known === undefined || c.closed_at < known) closesAt.set(k, c.closed_at);
  }
  const rounds = finished.map((r) => ({
    ...r,
    bettingClosedAt: closesAt.get(roundKey(r.game_slug, r.round_id)) ?? null,
  }));
  const open = await loadOpenBets(sql, ids, [...epochs.keys()]);
  const cashOuts = await loadCashOuts(sql, [...open.keys()]);
  for (const c of input.cashOuts) cashOuts.set(c.tx_id, c.multiplier);
  const result = stepRounds(rounds, statesOf(open), cashOuts, now);
  const w = fenced(result, open, (id) => open.get(id)?.partition ?? -1, epochs);
  await writeBatch(
    sql,
    {
      bets: w.writes,
      rounds,
      emitted: w.emitted,
      confirmed: [],
      closes: input.closes,
      cashOuts: input.cashOuts,
      fence: w.fence,
    },
    { key, next },
  );
  if (rounds.length > 0) await pruneRounds(sql, [...new Set(rounds.map((r) => r.game_slug))]);
  return w.sendable();
}

/**
 * Settles the open bets of the wallet `partitions` (claimed at `epochs`) whose round settlement
 * already stored: what a round read while the partition had no owner here left open. No checkpoint
 * moves.
 * @throws as settleRoundsBatch.
 */
export async function sweepPartitions(
  sql: Sql,
  partitions: readonly number[],
  epochs: Epochs,
  now: number,
): Promise<Sendable[]> {
  const open = await loadSettleableBets(sql, partitions);
  if (open.size === 0) return [];
  const wanted = [...open.values()].map((b) => ({
    game: b.state.placed.bet.game,
    round_id: b.state.placed.bet.round_id,
  }));
  const [rounds, cashOuts] = await Promise.all([
    loadRounds(sql, wanted),
    loadCashOuts(sql, [...open.keys()]),
  ]);
  const result = stepRounds([...rounds.values()], statesOf(open), cashOuts, now);
  const w = fenced(result, open, (id) => open.get(id)?.partition ?? -1, epochs);
  await writeBatch(sql, { bets: w.writes, rounds: [], emitted: w.emitted, confirmed: [], fence: w.fence });
  return w.sendable();
}

/**
 * Runs `attempt` (one load-step-write) in the instance's queue (`ownership.serial`) until it
 * stores: after a StaleBetError it is simply computed again from fresh rows; after a
 * StaleOwnerError `onStale` runs first, outside the queue (drop the partitions, or claim them
 * again). Up to 5 retries, 20 ms to 0.5 s apart.
 * @throws the last error, or at once any error other than those two.
 */
export async function retryStale<T>(
  ownership: Ownership,
  attempt: () => Promise<T>,
  onStale: (stale: ReadonlyMap<number, bigint>) => Promise<void>,
): Promise<T> {
  return await pRetry(() => ownership.serial(attempt), {
    retries: 5,
    minTimeout: 20,
    maxTimeout: 500,
    factor: 2,
    randomize: true,
    shouldRetry: (err) => err instanceof StaleOwnerError || err instanceof StaleBetError,
    onFailedAttempt: async (err) => {
      if (err instanceof StaleOwnerError) await onStale(err.partitions);
    },
  });
}
