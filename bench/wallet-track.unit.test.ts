/**
 * The wallet benchmark's bet tracker: when a bet's story is over, and how it ended, for each
 * lifecycle the saga and settlement can append (wallet-track.ts).
 */
import { describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from '../lib/log/wallet-events.ts';
import { BetTracker, endOf, finishedAt } from './wallet-track.ts';

const bet: BetContext = {
  session_id: 's',
  operator_id: 'o',
  user_id: 'u',
  currency: 'USD',
  game: 'wall-street',
  round_id: 4_000_000_000_007,
  amount_minor: 100,
  mode: 'default',
  bonus_code: null,
  free_bet_id: null,
  count_register: 1,
  demo: false,
};
const TX = 40;
const placed: WalletEvent = {
  type: 'BetPlaced',
  value: {
    tx_id: TX,
    bet,
    selection: { 'casino.wallet.WallStreetBet': { trend: 'up' } },
    placed_at: 1000,
  },
};
const ok = (kind: 'bet' | 'win' | 'rollback', txId: number, at: number, attempts = 1): WalletEvent => ({
  type: 'CallbackSucceeded',
  value: {
    tx_id: txId,
    bet_tx_id: TX,
    kind,
    operator_tx_id: '1',
    old_balance: '1.00',
    new_balance: '1.00',
    amount_minor: 100,
    answer: 'ok',
    attempts,
    at,
  },
});
const settled = (outcome: 'won' | 'lost', at: number): WalletEvent => ({
  type: 'BetSettled',
  value: {
    tx_id: TX,
    bet,
    outcome,
    payout_minor: outcome === 'won' ? 196 : 0,
    win_tx_id: outcome === 'won' ? TX + 1 : null,
    at,
  },
});
const rejected = (code: string, at: number): WalletEvent => ({
  type: 'BetRejected',
  value: { tx_id: TX, code, reason: code, at },
});
const rollback = (at: number): WalletEvent => ({
  type: 'RollbackRequested',
  value: { tx_id: TX + 2, linked_tx_id: TX, bet, reason: 'r', at },
});
const failed = (kind: 'bet' | 'win' | 'rollback', parked: boolean, at: number): WalletEvent => ({
  type: 'CallbackFailed',
  value: {
    tx_id: TX,
    bet_tx_id: TX,
    kind,
    attempts: 11,
    error: 'HTTP 500',
    answer: 'failed',
    code: 'OPERATOR_ERROR',
    parked,
    next_attempt_at: null,
    at,
  },
});

function track(events: WalletEvent[]) {
  const t = new BetTracker();
  for (const e of events) t.apply(e);
  return t.bet(TX);
}

describe('bet tracker', () => {
  it('a lost bet ends at its BetSettled, a won one only at its win credit', () => {
    expect(finishedAt(track([placed, ok('bet', TX, 1100), settled('lost', 1500)]))).toBe(1500);
    const won = [placed, ok('bet', TX, 1100), settled('won', 1500)];
    expect(finishedAt(track(won))).toBeUndefined();
    const credited = track([...won, ok('win', TX + 1, 1700, 3)]);
    expect(finishedAt(credited)).toBe(1700);
    expect(endOf(credited)).toBe('won');
    expect(credited.win).toEqual({ at: 1700, attempts: 3, parked: false });
  });

  it('a parked win ends the story (and is told apart)', () => {
    const b = track([placed, ok('bet', TX, 1100), settled('won', 1500), failed('win', true, 9000)]);
    expect(finishedAt(b)).toBe(9000);
    expect(b.win?.parked).toBe(true);
  });

  it('a failed debit ends when its compensating rollback is acknowledged', () => {
    const first = [placed, failed('bet', false, 1100), rejected('OPERATOR_ERROR', 1100), rollback(1100)];
    expect(finishedAt(track(first))).toBeUndefined();
    const b = track([...first, ok('rollback', TX + 2, 1300)]);
    expect(finishedAt(b)).toBe(1300);
    expect(endOf(b)).toBe('rejected');
  });

  it('a refused debit (no money moved) ends at its BetRejected', () => {
    const b = track([placed, rejected('INSUFFICIENT_FUNDS', 1100)]);
    expect(finishedAt(b)).toBe(1100);
    expect(endOf(b)).toBe('rejected');
  });

  it('a bet cancelled before its debit waits for the debit and then for the refund', () => {
    const cancelled = [placed, rejected('ROUND_CLOSED', 1050)];
    expect(finishedAt(track(cancelled))).toBeUndefined();
    const debited = [...cancelled, ok('bet', TX, 1100)];
    expect(finishedAt(track(debited))).toBeUndefined();
    const b = track([...debited, rollback(1150), ok('rollback', TX + 2, 1200)]);
    expect(finishedAt(b)).toBe(1200);
    expect(endOf(b)).toBe('cancelled');
  });

  it('keeps the finish time of every round', () => {
    const t = new BetTracker();
    t.round({
      type: 'RoundFinished',
      round_id: bet.round_id,
      game_id: 4,
      game_slug: 'wall-street',
      game_type: 'trending',
      finished_at: 1400,
      result: { game: 'wall-street', trending: 'up' },
      proof: null,
    });
    expect(t.roundsFinished.get(`wall-street:${bet.round_id}`)).toBe(1400);
  });
});
