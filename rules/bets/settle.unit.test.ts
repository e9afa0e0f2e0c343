import { describe, expect, it } from 'vitest';
import type { BetPlaced, WalletEvent } from '../wallet/events.ts';
import { type BetState, decide, evolve, type FinishedRound } from './settle.ts';

const T0 = 1_800_000_000_000;
function placed(over: Partial<BetPlaced['bet']> = {}, placedAt = T0): WalletEvent {
  return {
    type: 'BetPlaced',
    value: {
      tx_id: 400,
      bet: {
        session_id: '00000000-0000-4000-8000-000000000001',
        operator_id: 'op',
        user_id: 'u1',
        currency: 'USD',
        game: 'wall-street',
        round_id: 7,
        amount_minor: 1000,
        mode: 'default',
        bonus_code: null,
        free_bet_id: null,
        count_register: 1,
        demo: false,
        ...over,
      },
      selection: { 'casino.wallet.WallStreetBet': { trend: 'up' } },
      placed_at: placedAt,
    },
  };
}
const debit: WalletEvent = {
  type: 'CallbackSucceeded',
  value: {
    tx_id: 400,
    bet_tx_id: 400,
    kind: 'bet',
    operator_tx_id: 'o1',
    old_balance: '20.00',
    new_balance: '10.00',
    amount_minor: 1000,
    answer: 'ok',
    attempts: 1,
    at: T0,
  },
};
const round = (trending: 'up' | 'down', finishedAt = T0 + 5000): FinishedRound => ({
  round_id: 7,
  game_slug: 'wall-street',
  finished_at: finishedAt,
  result: { game: 'wall-street', trending },
});
const fold = (events: WalletEvent[]) => events.reduce<BetState | undefined>(evolve, undefined) as BetState;
const types = (events: WalletEvent[]) => events.map((e) => e.type);

describe('settlement decide/evolve', () => {
  it('a debited bet whose round finished settles once: won with win_tx_id = tx_id + 1', () => {
    const s = fold([placed(), debit]);
    expect(s.status).toBe('counted');
    const out = decide(s, round('up'), T0 + 6000);
    expect(out).toEqual([
      {
        type: 'BetSettled',
        value: expect.objectContaining({
          tx_id: 400,
          outcome: 'won',
          payout_minor: 1960,
          win_tx_id: 401,
          at: T0 + 6000,
        }),
      },
    ]);
    const after = out.reduce(evolve, s) as BetState;
    expect(after.status).toBe('settled');
    expect(decide(after, round('up'), T0 + 7000)).toEqual([]);
  });
  it('a lost bet settles with payout 0 and no win tx', () => {
    const out = decide(fold([placed(), debit]), round('down'), T0 + 6000);
    expect(out[0]?.value).toMatchObject({ outcome: 'lost', payout_minor: 0, win_tx_id: null });
  });
  it('waits for the debit; a bet rejected by the saga is never settled', () => {
    const s = fold([placed()]);
    expect(s.status).toBe('placed');
    expect(decide(s, round('up'), T0 + 6000)).toEqual([]);
    const rejected = evolve(s, {
      type: 'BetRejected',
      value: { tx_id: 400, code: 'INSUFFICIENT_FUNDS', reason: '', at: T0 },
    });
    expect(rejected?.status).toBe('rejected');
    expect(decide(rejected as BetState, round('up'), T0 + 6000)).toEqual([]);
    expect(decide(evolve(rejected, debit) as BetState, round('up'), T0 + 6000)).toEqual([]);
  });
  it('demo bets count without a debit; a free bet waits for its registration at the operator', () => {
    expect(fold([placed({ demo: true })]).status).toBe('counted');
    expect(types(decide(fold([placed({ mode: 'free' })]), round('up'), T0 + 6000))).toEqual([]);
    expect(types(decide(fold([placed({ mode: 'free' }), debit]), round('up'), T0 + 6000))).toEqual([
      'BetSettled',
    ]);
  });
  it("a bet placed at the finish instant is cancelled; its rollback is the process manager's, debited or not", () => {
    const late = placed({}, T0 + 5000);
    expect(types(decide(fold([late]), round('up'), T0 + 6000))).toEqual(['BetRejected']);
    const out = decide(fold([late, debit]), round('up'), T0 + 6000);
    expect(out.map((e) => [e.type, e.value.tx_id])).toEqual([['BetRejected', 400]]);
    expect(out[0]?.value).toMatchObject({ code: 'ROUND_CLOSED' });
    const after = out.reduce(evolve, fold([late, debit])) as BetState;
    expect(after.status).toBe('cancelled');
    expect(decide(after, round('up'), T0 + 7000)).toEqual([]);
  });
  it('a cancelled bet whose debit is confirmed afterwards decides nothing more here (the process rolls it back)', () => {
    const s = fold([placed({}, T0 + 9000)]);
    const cancelled = decide(s, round('up'), T0 + 9500).reduce(evolve, s) as BetState;
    expect(cancelled.status).toBe('cancelled');
    const debited = evolve(cancelled, debit) as BetState;
    expect(decide(debited, undefined, T0 + 9600)).toEqual([]);
    expect(decide(debited, round('up'), T0 + 9600)).toEqual([]);
  });
  it('a selection of another game is cancelled as INVALID_BET, and a round not finished decides nothing', () => {
    const base = placed().value as BetPlaced;
    const slotOnWs: WalletEvent = {
      type: 'BetPlaced',
      value: { ...base, selection: { 'casino.wallet.SlotBet': { lines: 1 } } },
    };
    const s = fold([slotOnWs, debit]);
    expect(decide(s, undefined, T0)).toEqual([]);
    const out = decide(s, round('up'), T0 + 6000);
    expect(out.map((e) => e.type)).toEqual(['BetRejected']);
    expect(out[0]?.value).toMatchObject({ code: 'INVALID_BET' });
  });
  it('events before the BetPlaced and a repeated BetPlaced change nothing', () => {
    expect(evolve(undefined, debit)).toBeUndefined();
    const s = fold([placed(), debit]);
    expect(evolve(s, placed())).toBe(s);
  });
});

describe('settlement decide: the round lifecycle', () => {
  const closed = (at: number): FinishedRound => ({ ...round('up'), bettingClosedAt: at });
  const withAppend = (appendedAt: number, placedAt = T0) =>
    [placed({}, placedAt), debit].reduce<BetState | undefined>(
      (s, e) => evolve(s, e, appendedAt),
      undefined,
    ) as BetState;

  it('keeps the broker append time of the BetPlaced', () => {
    expect(withAppend(T0 + 123).appendedAt).toBe(T0 + 123);
  });

  it('settles a bet appended before BettingClosed, whatever its placed_at', () => {
    expect(types(decide(withAppend(T0 + 999, T0 + 4000), closed(T0 + 1000), T0 + 9000))).toEqual([
      'BetSettled',
    ]);
  });

  it('cancels a debited bet appended at or after BettingClosed, even with an early placed_at', () => {
    for (const appendedAt of [T0 + 1000, T0 + 1001]) {
      const out = decide(withAppend(appendedAt, T0 - 5000), closed(T0 + 1000), T0 + 9000);
      expect(types(out)).toEqual(['BetRejected']);
      expect(out[0]?.value).toMatchObject({ code: 'ROUND_CLOSED' });
    }
  });

  it('falls back to placed_at against finished_at for a round without lifecycle records', () => {
    expect(types(decide(withAppend(T0 + 99_999), round('up'), T0 + 9000))).toEqual(['BetSettled']);
    expect(types(decide(withAppend(T0, T0 + 5000), round('up'), T0 + 9000))).toEqual(['BetRejected']);
  });
});
