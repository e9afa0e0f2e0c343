/**
 * What bench/wallet.ts knows about each bet, built from the events of `wallet-transactions` and
 * the RoundFinished records of `rounds` (pure: no I/O). Two times per fact: the event's own `at`
 * (the appender's clock) and its record's broker append time (both topics use LogAppendTime), all
 * Unix ms on this machine. A bet is finished when its story is over:
 * - settled lost: BetSettled{lost} and its round close acknowledged (CallbackSucceeded{close}, a
 *   zero-amount win) or parked; for an operator with round_close `none` (`roundClose: false`) the
 *   BetSettled alone;
 * - settled won: BetSettled{won} and its win acknowledged (CallbackSucceeded{win}) or parked (a
 *   won bet without a payout is closed like a lost one);
 * - rejected (operator refused or failed the debit) or cancelled (round closed before placement):
 *   BetRejected, and when money may have moved (debited, or a RollbackRequested exists) the
 *   rollback acknowledged or parked.
 * "Settled" in the figures means the first two with nothing parked (the wallet benchmark: a bet is
 * settled when won and credited, or lost and its round closed); the others are counted beside.
 */

import type { WalletEvent } from '../lib/log/wallet-events.ts';
import type { RoundEvent } from '../rules/rounds/round.ts';

/** The operator's answer to a win, close or rollback: when it was acknowledged (or parked). */
export interface Leg {
  /** The saga's clock when the answer came (CallbackSucceeded/CallbackFailed `at`). */
  readonly at: number;
  /** Broker append time of that event. */
  readonly appendedAt: number;
  readonly attempts: number;
  readonly parked: boolean;
}

/** One bet as the bench saw it; times are Unix ms. */
export interface BetTrack {
  /** Just before POST /play/bets. */
  postAt?: number;
  /** When the API answered 202. */
  acceptedAt?: number;
  gameRound?: string;
  /** BetPlaced: the API's clock as its handler began (placed_at), and the record's append time. */
  placed?: { at: number; appendedAt: number };
  /** Register Bet outcome. */
  debit?: { outcome: 'debited' | 'failed' | 'refused'; at: number };
  rejected?: { code: string; at: number };
  rollbackRequested?: boolean;
  rollbackDone?: { at: number; parked: boolean };
  settled?: { outcome: 'won' | 'lost'; payoutMinor: number; at: number; appendedAt: number };
  win?: Leg;
  /** The round close of a lost bet (zero-amount win, tx id bet + 1). */
  close?: Leg;
}

/** A round's end: RoundFinished.finished_at (engine clock) and its record's append time. */
export interface RoundEnd {
  readonly finishedAt: number;
  readonly appendedAt: number;
}

/** Codes of BetRejected appended by settlement rather than by the saga. */
const SETTLEMENT_CODES = new Set(['ROUND_CLOSED', 'INVALID_BET']);

/** Bets by tx_id and rounds' ends, fed from the log. */
export class BetTracker {
  readonly bets = new Map<number, BetTrack>();
  /** `${game}:${round_id}` → its end. */
  readonly roundsFinished = new Map<string, RoundEnd>();
  /** Whether the operator closes lost bets' rounds (round_close other than `none`). */
  readonly roundClose: boolean;

  constructor(o: { roundClose?: boolean } = {}) {
    this.roundClose = o.roundClose ?? true;
  }

  bet(txId: number): BetTrack {
    let b = this.bets.get(txId);
    if (!b) {
      b = {};
      this.bets.set(txId, b);
    }
    return b;
  }

  /** Applies one event of `rounds` (only RoundFinished matters), appended at `appendedAt`. */
  round(r: RoundEvent, appendedAt: number): void {
    if (r.type !== 'RoundFinished') return;
    this.roundsFinished.set(`${r.game_slug}:${r.round_id}`, { finishedAt: r.finished_at, appendedAt });
  }

  /** Applies one wallet event (log order per player) appended at `appendedAt` (default its `at`). */
  apply(e: WalletEvent, appendedAt?: number): void {
    switch (e.type) {
      case 'BetPlaced': {
        const b = this.bet(e.value.tx_id);
        b.gameRound = `${e.value.bet.game}:${e.value.bet.round_id}`;
        b.placed = { at: e.value.placed_at, appendedAt: appendedAt ?? e.value.placed_at };
        return;
      }
      case 'CallbackSucceeded': {
        const v = e.value;
        const b = this.bet(v.bet_tx_id);
        const leg = { at: v.at, appendedAt: appendedAt ?? v.at, attempts: v.attempts, parked: false };
        if (v.kind === 'bet') b.debit = { outcome: 'debited', at: v.at };
        else if (v.kind === 'win') b.win = leg;
        else if (v.kind === 'close') b.close = leg;
        else b.rollbackDone = { at: v.at, parked: false };
        return;
      }
      case 'CallbackFailed': {
        const v = e.value;
        const b = this.bet(v.bet_tx_id);
        const leg = { at: v.at, appendedAt: appendedAt ?? v.at, attempts: v.attempts, parked: true };
        if (v.kind === 'bet') b.debit = { outcome: 'failed', at: v.at };
        else if (!v.parked) return;
        else if (v.kind === 'win') b.win = leg;
        else if (v.kind === 'close') b.close = leg;
        else b.rollbackDone = { at: v.at, parked: true };
        return;
      }
      case 'BetRejected': {
        const b = this.bet(e.value.tx_id);
        b.rejected = { code: e.value.code, at: e.value.at };
        // The saga appends CallbackFailed before its BetRejected when the debit failed.
        if (!SETTLEMENT_CODES.has(e.value.code) && !b.debit) b.debit = { outcome: 'refused', at: e.value.at };
        return;
      }
      case 'RollbackRequested':
        this.bet(e.value.linked_tx_id).rollbackRequested = true;
        return;
      case 'BetSettled': {
        const v = e.value;
        this.bet(v.tx_id).settled = {
          outcome: v.outcome,
          payoutMinor: v.payout_minor,
          at: v.at,
          appendedAt: appendedAt ?? v.at,
        };
        return;
      }
    }
  }

  /** The callback a settled bet waits for: its win, its round close, or none. */
  legOf(b: BetTrack): 'win' | 'close' | 'none' {
    if (!b.settled) return 'none';
    if (b.settled.outcome === 'won' && b.settled.payoutMinor > 0) return 'win';
    return this.roundClose ? 'close' : 'none';
  }

  /** When `b`'s story ended (Unix ms), or undefined while it goes on. */
  finishedAt(b: BetTrack): number | undefined {
    if (!b.debit) return undefined;
    if (b.settled) {
      const leg = this.legOf(b);
      return leg === 'none' ? b.settled.at : b[leg]?.at;
    }
    if (!b.rejected) return undefined;
    const needsRollback = b.rollbackRequested === true || b.debit.outcome === 'debited';
    if (!needsRollback) return Math.max(b.rejected.at, b.debit.at);
    return b.rollbackDone ? Math.max(b.rejected.at, b.rollbackDone.at) : undefined;
  }

  /** Won and credited, or lost and its round closed (or not to be closed), nothing parked. */
  isSettled(b: BetTrack): boolean {
    if (!b.settled || this.finishedAt(b) === undefined) return false;
    const leg = this.legOf(b);
    return leg === 'none' || b[leg]?.parked === false;
  }
}

/** How a finished bet ended. */
export function endOf(b: BetTrack): 'won' | 'lost' | 'rejected' | 'cancelled' {
  if (b.settled) return b.settled.outcome;
  return b.rejected && SETTLEMENT_CODES.has(b.rejected.code) ? 'cancelled' : 'rejected';
}
