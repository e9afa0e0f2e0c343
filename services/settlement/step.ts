/**
 * One batch of settlement as pure code: the records of one partition (wallet events or finished
 * rounds) applied to the loaded bet states, giving the changed states, the events to append and the
 * outbox entries the batch confirms (our own events read back from the log). Manual cash-outs are
 * given by bet tx_id. No I/O; `now` is Unix ms.
 */
import { encodeEvent, type WalletEvent, walletKey } from '../../lib/log/wallet-events.ts';
import { type BetState, betTxIdOf, decide, evolve, type FinishedRound } from '../../rules/bets/settle.ts';

/** Key of a round in the maps below. */
export const roundKey = (game: string, roundId: number): string => `${game}:${roundId}`;

/**
 * An event settlement appends, with its record key (walletKey of the bet) and its encoding, made
 * once here for both the outbox row and the append.
 */
export interface Emitted {
  readonly key: string;
  readonly event: WalletEvent;
  readonly value: Buffer;
}

/** Identity of an appended event, to recognise it when it is read back. */
export interface OutboxId {
  readonly type: WalletEvent['type'];
  readonly tx_id: number;
}

export interface StepResult {
  /** Bets whose state changed, by tx_id. */
  readonly changed: Map<number, BetState>;
  readonly emitted: Emitted[];
  /** Settlement-kind events (BetSettled, BetRejected, RollbackRequested) read in this batch. */
  readonly confirmed: OutboxId[];
}

const OURS = new Set<WalletEvent['type']>(['BetSettled', 'BetRejected', 'RollbackRequested']);

/** Manual cash-out multipliers by bet tx_id (BetCashedOut). */
export type CashOuts = ReadonlyMap<number, string>;

/** A wallet event with its record's broker append time (Unix ms). */
export interface TimedWalletEvent {
  readonly event: WalletEvent;
  readonly appendedAt: number;
}

function settle(
  state: BetState,
  round: FinishedRound | undefined,
  now: number,
  emitted: Emitted[],
  cashOuts: CashOuts,
): BetState {
  let s = state;
  for (const e of decide(s, round, now, cashOuts.get(s.placed.tx_id))) {
    s = evolve(s, e) as BetState;
    emitted.push({ key: walletKey(s.placed.bet), event: e, value: encodeEvent(e) });
  }
  return s;
}

/**
 * Applies wallet events (log order) to `bets` (loaded states, mutated) against the known
 * `rounds` (by roundKey).
 */
export function stepWallet(
  events: readonly TimedWalletEvent[],
  bets: Map<number, BetState>,
  rounds: ReadonlyMap<string, FinishedRound>,
  cashOuts: CashOuts,
  now: number,
): StepResult {
  const changed = new Map<number, BetState>();
  const emitted: Emitted[] = [];
  const confirmed: OutboxId[] = [];
  for (const { event: e, appendedAt } of events) {
    if (OURS.has(e.type)) confirmed.push({ type: e.type, tx_id: e.value.tx_id });
    const id = betTxIdOf(e);
    const before = bets.get(id);
    const after = evolve(before, e, appendedAt);
    if (!after || after === before) continue;
    const b = after.placed.bet;
    const settled = settle(after, rounds.get(roundKey(b.game, b.round_id)), now, emitted, cashOuts);
    bets.set(id, settled);
    changed.set(id, settled);
  }
  return { changed, emitted, confirmed };
}

/** Applies finished rounds to the open bets of those rounds (`bets`, mutated). */
export function stepRounds(
  finished: readonly FinishedRound[],
  bets: Map<number, BetState>,
  cashOuts: CashOuts,
  now: number,
): StepResult {
  const changed = new Map<number, BetState>();
  const emitted: Emitted[] = [];
  const byRound = new Map(finished.map((r) => [roundKey(r.game_slug, r.round_id), r]));
  for (const [id, s] of bets) {
    const round = byRound.get(roundKey(s.placed.bet.game, s.placed.bet.round_id));
    if (!round) continue;
    const after = settle(s, round, now, emitted, cashOuts);
    if (after === s) continue;
    bets.set(id, after);
    changed.set(id, after);
  }
  return { changed, emitted, confirmed: [] };
}
