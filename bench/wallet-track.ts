/**
 * What bench/wallet.ts knows about each bet, built from the events of `wallet-transactions` and
 * the RoundFinished records of `rounds` (pure: no I/O; times are the events' own `at`, Unix ms,
 * all stamped on this machine). A bet is finished when its story is over:
 * - settled lost: BetSettled{lost};
 * - settled won: BetSettled{won} and its win acknowledged (CallbackSucceeded{win}) or parked;
 * - rejected (operator refused or failed the debit) or cancelled (round closed before placement):
 *   BetRejected, and when money may have moved (debited, or a RollbackRequested exists) the
 *   rollback acknowledged or parked.
 * "Settled" in the figures means the first two (issue 5 benchmark: bet callback, settlement, win
 * callback); rejected and cancelled bets are counted beside them.
 */

import type { WalletEvent } from '../lib/log/wallet-events.ts';
import type { RoundFinished } from '../rules/rounds/round.ts';

/** One bet as the bench saw it; times are Unix ms. */
export interface BetTrack {
  /** Just before POST /play/bets. */
  postAt?: number;
  /** When the API answered 202. */
  acceptedAt?: number;
  gameRound?: string;
  /** Register Bet outcome. */
  debit?: { outcome: 'debited' | 'failed' | 'refused'; at: number };
  rejected?: { code: string; at: number };
  rollbackRequested?: boolean;
  rollbackDone?: { at: number; parked: boolean };
  settled?: { outcome: 'won' | 'lost'; at: number };
  win?: { at: number; attempts: number; parked: boolean };
}

/** Codes of BetRejected appended by settlement rather than by the saga. */
const SETTLEMENT_CODES = new Set(['ROUND_CLOSED', 'INVALID_BET']);

/** Bets by tx_id and rounds' finish times, fed from the log. */
export class BetTracker {
  readonly bets = new Map<number, BetTrack>();
  /** `${game}:${round_id}` → finished_at (Unix ms). */
  readonly roundsFinished = new Map<string, number>();

  bet(txId: number): BetTrack {
    let b = this.bets.get(txId);
    if (!b) {
      b = {};
      this.bets.set(txId, b);
    }
    return b;
  }

  round(r: RoundFinished): void {
    this.roundsFinished.set(`${r.game_slug}:${r.round_id}`, r.finished_at);
  }

  /** Applies one wallet event (log order per player). */
  apply(e: WalletEvent): void {
    switch (e.type) {
      case 'BetPlaced':
        this.bet(e.value.tx_id).gameRound = `${e.value.bet.game}:${e.value.bet.round_id}`;
        return;
      case 'CallbackSucceeded': {
        const v = e.value;
        const b = this.bet(v.bet_tx_id);
        if (v.kind === 'bet') b.debit = { outcome: 'debited', at: v.at };
        else if (v.kind === 'win') b.win = { at: v.at, attempts: v.attempts, parked: false };
        else b.rollbackDone = { at: v.at, parked: false };
        return;
      }
      case 'CallbackFailed': {
        const v = e.value;
        const b = this.bet(v.bet_tx_id);
        if (v.kind === 'bet') b.debit = { outcome: 'failed', at: v.at };
        else if (!v.parked) return;
        else if (v.kind === 'win') b.win = { at: v.at, attempts: v.attempts, parked: true };
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
      case 'BetSettled':
        this.bet(e.value.tx_id).settled = { outcome: e.value.outcome, at: e.value.at };
        return;
    }
  }
}

/** When `b`'s story ended (Unix ms), or undefined while it goes on. */
export function finishedAt(b: BetTrack): number | undefined {
  if (!b.debit) return undefined;
  if (b.settled?.outcome === 'lost') return b.settled.at;
  if (b.settled?.outcome === 'won') return b.win?.at;
  if (!b.rejected) return undefined;
  const needsRollback = b.rollbackRequested === true || b.debit.outcome === 'debited';
  if (!needsRollback) return Math.max(b.rejected.at, b.debit.at);
  return b.rollbackDone ? Math.max(b.rejected.at, b.rollbackDone.at) : undefined;
}

/** How a finished bet ended. */
export function endOf(b: BetTrack): 'won' | 'lost' | 'rejected' | 'cancelled' {
  if (b.settled) return b.settled.outcome;
  return b.rejected && SETTLEMENT_CODES.has(b.rejected.code) ? 'cancelled' : 'rejected';
}
