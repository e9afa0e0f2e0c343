/**
 * The wallet benchmark's bet tracker: when a bet's story is over, and how it ended, for each
 * lifecycle the saga and settlement can append (wallet-track.ts).
 */
import { describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from '../lib/log/wallet-events.ts';
import { BetTracker, endOf } from './wallet-track.ts';

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
const ok = (
  kind: 'bet' | 'win' | 'rollback' | 'close',
  txId: number,
  at: number,
  attempts = 1,
): WalletEvent => ({
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
const failed = (kind: 'bet' | 'win' | 'rollback' | 'close', parked: boolean, at: number): WalletEvent => ({
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

/** The tracker after `events` (each appended 5 ms after its `at`), and its bet TX. */
function tracked(events: WalletEvent[], roundClose = true) {
  const t = new BetTracker({ roundClose });
  for (const e of events) t.apply(e, 'at' in e.value ? e.value.at + 5 : undefined);
  const b = t.bet(TX);
  return { b, finished: t.finishedAt(b), settled: t.isSettled(b) };
}

describe('bet tracker', () => {
  it('a lost bet ends when its round close is acknowledged, a won one only at its win credit', () => {
    const lost = [placed, ok('bet', TX, 1100), settled('lost', 1500)];
    expect(tracked(lost).finished).toBeUndefined();
    const closed = tracked([...lost, ok('close', TX + 1, 1600, 2)]);
    expect(closed).toMatchObject({ finished: 1600, settled: true });
    expect(closed.b.close).toEqual({ at: 1600, appendedAt: 1605, attempts: 2, parked: false });
    expect(endOf(closed.b)).toBe('lost');
    const won = [placed, ok('bet', TX, 1100), settled('won', 1500)];
    expect(tracked(won).finished).toBeUndefined();
    const credited = tracked([...won, ok('win', TX + 1, 1700, 3)]);
    expect(credited).toMatchObject({ finished: 1700, settled: true });
    expect(endOf(credited.b)).toBe('won');
    expect(credited.b.win).toEqual({ at: 1700, appendedAt: 1705, attempts: 3, parked: false });
    expect(credited.b.settled).toEqual({ outcome: 'won', payoutMinor: 196, at: 1500, appendedAt: 1505 });
  });

  it('for an operator that closes no rounds, a lost bet ends at its BetSettled', () => {
    expect(tracked([placed, ok('bet', TX, 1100), settled('lost', 1500)], false)).toMatchObject({
      finished: 1500,
      settled: true,
    });
  });

  it('a parked win or close ends the story but is not settled', () => {
    const win = tracked([placed, ok('bet', TX, 1100), settled('won', 1500), failed('win', true, 9000)]);
    expect(win).toMatchObject({ finished: 9000, settled: false });
    expect(win.b.win?.parked).toBe(true);
    const close = tracked([placed, ok('bet', TX, 1100), settled('lost', 1500), failed('close', true, 8000)]);
    expect(close).toMatchObject({ finished: 8000, settled: false });
    // A failed attempt that will be retried changes nothing.
    expect(
      tracked([placed, ok('bet', TX, 1100), settled('lost', 1500), failed('close', false, 1600)]),
    ).toMatchObject({ finished: undefined, settled: false });
  });

  it('a failed debit ends when its compensating rollback is acknowledged', () => {
    const first = [placed, failed('bet', false, 1100), rejected('OPERATOR_ERROR', 1100), rollback(1100)];
    expect(tracked(first).finished).toBeUndefined();
    const b = tracked([...first, ok('rollback', TX + 2, 1300)]);
    expect(b).toMatchObject({ finished: 1300, settled: false });
    expect(endOf(b.b)).toBe('rejected');
  });

  it('a refused debit (no money moved) ends at its BetRejected', () => {
    const b = tracked([placed, rejected('INSUFFICIENT_FUNDS', 1100)]);
    expect(b.finished).toBe(1100);
    expect(endOf(b.b)).toBe('rejected');
  });

  it('a bet cancelled before its debit waits for the debit and then for the refund', () => {
    const cancelled = [placed, rejected('ROUND_CLOSED', 1050)];
    expect(tracked(cancelled).finished).toBeUndefined();
    const debited = [...cancelled, ok('bet', TX, 1100)];
    expect(tracked(debited).finished).toBeUndefined();
    const b = tracked([...debited, rollback(1150), ok('rollback', TX + 2, 1200)]);
    expect(b.finished).toBe(1200);
    expect(endOf(b.b)).toBe('cancelled');
  });

  it('keeps the end of every round (finished_at and append time), nothing of other round events', () => {
    const t = new BetTracker();
    t.round(
      {
        type: 'RoundFinished',
        round_id: bet.round_id,
        game_id: 4,
        game_slug: 'wall-street',
        game_type: 'trending',
        finished_at: 1400,
        result: { game: 'wall-street', trending: 'up' },
        proof: null,
      },
      1403,
    );
    t.round(
      { type: 'BettingClosed', round_id: bet.round_id + 1, game_id: 4, game_slug: 'wall-street', at: 1500 },
      1501,
    );
    expect(t.roundsFinished.get(`wall-street:${bet.round_id}`)).toEqual({
      finishedAt: 1400,
      appendedAt: 1403,
    });
    expect(t.roundsFinished.size).toBe(1);
  });
});
