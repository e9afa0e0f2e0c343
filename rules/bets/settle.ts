/**
 * A bet's settlement state as pure decide/evolve (docs/conventions.md §3
 * step 3). No I/O, no clock: `now` (Unix ms) comes in as an argument.
 *
 *   placed ──CallbackSucceeded{bet}──▶ counted ──round finished──▶ settled
 *     │          (demo bets start counted)             │
 *     ├──BetRejected (saga)──▶ rejected                  └─appended after BettingClosed──▶ cancelled
 *     └──appended after BettingClosed, or a selection of another game──▶ cancelled
 *
 * "After BettingClosed" compares broker append times (the topics use
 * LogAppendTime, so one clock orders a bet and its round's close whatever the API's clock or
 * speed); for a round without lifecycle records (ingested, or from before rounds had a lifecycle) a bet placed
 * at or after the round finished is late.
 *
 * Settlement only cancels: a cancelled bet that was (or later turns out to be) debited gets its one
 * RollbackRequested (tx_id + 2) from the bet's process manager (rules/wallet/process.ts), the one
 * owner of that decision, which reads the cancellation and the debit's confirmation in their log
 * order (docs/decisions/rounds-and-fairness/0004-bets-only-in-the-betting-window.md). A rejected bet is never settled.
 */

import { winTxId } from '../money/money.ts';
import type { RoundFinished } from '../rounds/round.ts';
import type { BetPlaced, WalletEvent } from '../wallet/events.ts';
import { InvalidBetError, payout, selectionOf } from './payout.ts';

export type BetStatus = 'placed' | 'counted' | 'settled' | 'rejected' | 'cancelled';

/** Everything settlement knows about one bet. */
export interface BetState {
  readonly placed: BetPlaced;
  readonly status: BetStatus;
  /** The operator confirmed the debit (CallbackSucceeded kind bet). */
  readonly debited: boolean;
  /**
   * A RollbackRequested of this bet was read. Kept in stored states; settlement no longer decides
   * rollbacks (the bet's process manager does), so it reads it for nothing.
   */
  readonly rollback: boolean;
  /** Broker append time of its BetPlaced record, Unix ms (absent in states kept before rounds had a lifecycle). */
  readonly appendedAt?: number;
}

/**
 * The finished round a bet is on: what decide needs of a RoundFinished, and the broker append time
 * of its BettingClosed (Unix ms) when the round had one.
 */
export type FinishedRound = Pick<RoundFinished, 'round_id' | 'game_slug' | 'finished_at' | 'result'> & {
  readonly bettingClosedAt?: number | null;
};

/** The bet tx_id a wallet event is about (RollbackRequested → linked bet, callbacks → bet_tx_id). */
export function betTxIdOf(e: WalletEvent): number {
  switch (e.type) {
    case 'CallbackSucceeded':
    case 'CallbackFailed':
      return e.value.bet_tx_id;
    case 'RollbackRequested':
      return e.value.linked_tx_id;
    default:
      return e.value.tx_id;
  }
}

/**
 * Applies one wallet event of this bet. A BetPlaced starts the state (a repeated one changes
 * nothing), with `appendedAt`, its record's broker append time (Unix ms); any other event before a
 * BetPlaced returns `undefined` (nothing to settle).
 */
export function evolve(
  state: BetState | undefined,
  e: WalletEvent,
  appendedAt?: number,
): BetState | undefined {
  if (e.type === 'BetPlaced') {
    if (state) return state;
    const b = e.value.bet;
    return {
      placed: e.value,
      // A free bet waits for its registration at the operator like a debit.
      status: b.demo ? 'counted' : 'placed',
      debited: false,
      rollback: false,
      ...(appendedAt === undefined ? {} : { appendedAt }),
    };
  }
  if (!state) return undefined;
  switch (e.type) {
    case 'CallbackSucceeded':
      if (e.value.kind !== 'bet') return state;
      return { ...state, debited: true, status: state.status === 'placed' ? 'counted' : state.status };
    case 'BetRejected': {
      if (state.status !== 'placed' && state.status !== 'counted') return state;
      const ours = e.value.code === 'ROUND_CLOSED' || e.value.code === 'INVALID_BET';
      return { ...state, status: ours ? 'cancelled' : 'rejected' };
    }
    case 'RollbackRequested':
      return { ...state, rollback: true };
    case 'BetSettled':
      return { ...state, status: 'settled' };
    case 'CallbackFailed':
      return state;
  }
}

function cancel(state: BetState, code: string, reason: string, now: number): WalletEvent[] {
  return [{ type: 'BetRejected', value: { tx_id: state.placed.tx_id, code, reason, at: now } }];
}

/** Why a bet came too late for its round, or undefined when it came in time. */
function lateness(state: BetState, round: FinishedRound): string | undefined {
  const p = state.placed;
  const closedAt = round.bettingClosedAt;
  if (closedAt === undefined || closedAt === null)
    return p.placed_at >= round.finished_at
      ? `bet placed at ${p.placed_at}, round finished at ${round.finished_at}`
      : undefined;
  const at = state.appendedAt ?? p.placed_at;
  return at >= closedAt ? `bet appended at ${at}, after betting closed at ${closedAt}` : undefined;
}

/**
 * The events settlement appends for `state` given its round (`undefined` while it has not
 * finished). Feed them back through `evolve` before deciding again: decide is not idempotent by
 * itself, the state is.
 * @param round must be the bet's own round (same game and round_id).
 * @param manualCashOut the multiplier of the bet's BetCashedOut, when the engine accepted one.
 */
export function decide(
  state: BetState,
  round: FinishedRound | undefined,
  now: number,
  manualCashOut?: string,
): WalletEvent[] {
  const p = state.placed;
  if (state.status !== 'placed' && state.status !== 'counted') return [];
  if (!round) return [];
  const late = lateness(state, round);
  if (late) return cancel(state, 'ROUND_CLOSED', late, now);
  let result: ReturnType<typeof payout>;
  try {
    result = payout(selectionOf(p.selection), round.result, p.bet.amount_minor, manualCashOut);
  } catch (err) {
    if (err instanceof InvalidBetError) return cancel(state, 'INVALID_BET', err.message, now);
    throw err;
  }
  if (state.status === 'placed') return []; // the debit is not confirmed yet: wait for it or its rejection
  return [
    {
      type: 'BetSettled',
      value: {
        tx_id: p.tx_id,
        bet: p.bet,
        outcome: result.outcome,
        payout_minor: result.payoutMinor,
        win_tx_id: result.outcome === 'won' ? winTxId(p.tx_id) : null,
        at: now,
      },
    },
  ];
}
