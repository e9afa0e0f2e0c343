import { describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from './events.ts';
import { betOutcome, planJob } from './plan.ts';

const bet: BetContext = {
  session_id: '00000000-0000-4000-8000-000000000001',
  operator_id: 'op1',
  user_id: 'u1',
  currency: 'EUR',
  game: 'double',
  round_id: 2_000_000_000_001,
  amount_minor: 500,
  mode: 'default',
  bonus_code: null,
  count_register: 1,
  demo: false,
};
const placed = (b: Partial<BetContext> = {}): WalletEvent => ({
  type: 'BetPlaced',
  value: {
    tx_id: 8,
    bet: { ...bet, ...b },
    selection: { 'casino.wallet.DoubleBet': { color: 'red' } },
    placed_at: 1,
  },
});
const settled = (outcome: 'won' | 'lost', b: Partial<BetContext> = {}): WalletEvent => ({
  type: 'BetSettled',
  value: {
    tx_id: 8,
    bet: { ...bet, ...b },
    outcome,
    payout_minor: outcome === 'won' ? 1000 : 0,
    win_tx_id: outcome === 'won' ? 9 : null,
    at: 2,
  },
});
const rollback = (b: Partial<BetContext> = {}): WalletEvent => ({
  type: 'RollbackRequested',
  value: { tx_id: 10, linked_tx_id: 8, bet: { ...bet, ...b }, reason: 'x', at: 3 },
});

describe('planJob', () => {
  it('asks for a bet callback only for default, non-demo bets', () => {
    expect(planJob(placed())).toMatchObject({ kind: 'bet', txId: 8, betTxId: 8, amountMinor: 500 });
    expect(planJob(placed({ demo: true }))).toBeNull();
    expect(planJob(placed({ mode: 'free' }))).toBeNull();
  });
  it('asks for a win for won, non-demo settlements (free-bet wins too)', () => {
    expect(planJob(settled('won'))).toMatchObject({ kind: 'win', txId: 9, betTxId: 8, amountMinor: 1000 });
    expect(planJob(settled('won', { mode: 'free' }))).toMatchObject({ kind: 'win' });
    expect(planJob(settled('lost'))).toBeNull();
    expect(planJob(settled('won', { demo: true }))).toBeNull();
  });
  it('asks for a rollback unless demo or free', () => {
    expect(planJob(rollback())).toMatchObject({ kind: 'rollback', txId: 10, betTxId: 8, amountMinor: 500 });
    expect(planJob(rollback({ demo: true }))).toBeNull();
    expect(planJob(rollback({ mode: 'free' }))).toBeNull();
  });
  it('ignores the saga’s own outcome events', () => {
    const ev: WalletEvent = { type: 'BetRejected', value: { tx_id: 8, code: 'X', reason: 'y', at: 1 } };
    expect(planJob(ev)).toBeNull();
  });
});

describe('betOutcome', () => {
  const job = planJob(placed());
  if (!job) throw new Error('no job');
  it('ok → CallbackSucceeded only', () => {
    const ev = betOutcome(
      job,
      { type: 'ok', ack: { operatorTxId: 'o', oldBalance: '10.00', newBalance: '5.00' } },
      7,
    );
    expect(ev.map((e) => e.type)).toEqual(['CallbackSucceeded']);
    expect(ev[0]?.value).toMatchObject({
      tx_id: 8,
      bet_tx_id: 8,
      kind: 'bet',
      attempts: 1,
      amount_minor: 500,
      at: 7,
    });
  });
  it('refusal → BetRejected only, with the operator code', () => {
    const ev = betOutcome(job, { type: 'refused', status: 402, code: 'INSUFFICIENT_FUNDS', reason: 'r' }, 7);
    expect(ev).toEqual([
      { type: 'BetRejected', value: { tx_id: 8, code: 'INSUFFICIENT_FUNDS', reason: 'r', at: 7 } },
    ]);
  });
  it('failure → CallbackFailed, BetRejected{TIMEOUT} and RollbackRequested{bet+2}', () => {
    const ev = betOutcome(job, { type: 'failed', code: 'TIMEOUT', reason: 'slow' }, 7);
    expect(ev.map((e) => e.type)).toEqual(['CallbackFailed', 'BetRejected', 'RollbackRequested']);
    expect(ev[0]?.value).toMatchObject({ kind: 'bet', parked: false, attempts: 1 });
    expect(ev[1]?.value).toMatchObject({ code: 'TIMEOUT' });
    expect(ev[2]?.value).toMatchObject({ tx_id: 10, linked_tx_id: 8, bet: job.bet });
  });
});
