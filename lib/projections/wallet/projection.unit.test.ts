import { describe, expect, it } from 'vitest';
import { placed, succeeded, T0 } from '../../../tests/support/settlement.ts';
import type { WalletEvent } from '../../log/wallet-events.ts';
import { merge, patchesOf, projectWallet, type TxPatch } from './projection.ts';

const bet = placed(200, 'double', 4);
const events: WalletEvent[] = [
  bet,
  succeeded(200, 'bet', '90.00'),
  {
    type: 'BetSettled',
    value: {
      tx_id: 200,
      bet: bet.value.bet,
      outcome: 'won',
      payout_minor: 2000,
      win_tx_id: 201,
      at: T0 + 150,
    },
  },
  {
    type: 'CallbackFailed',
    value: {
      tx_id: 201,
      bet_tx_id: 200,
      kind: 'win',
      attempts: 2,
      error: '500',
      answer: 'failed',
      code: 'OPERATOR_ERROR',
      parked: false,
      next_attempt_at: T0 + 1000,
      at: T0 + 160,
    },
  },
  {
    ...succeeded(200, 'win', '110.00', 2000),
    value: { ...succeeded(200, 'win', '110.00', 2000).value, attempts: 3 },
  },
];

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) =>
    permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]),
  );
}
const withoutDetail = (ps: TxPatch[]) =>
  ps.map(({ detail: _d, ...rest }) => rest).sort((a, b) => a.tx_id - b.tx_id);

describe('wallet projection', () => {
  it('given a won bet, then a bet row and a win row with the operator answers', () => {
    const { patches, balances } = projectWallet(events);
    expect(
      patches.map((p) => [p.tx_id, p.kind, p.status, p.round_status, p.amount_minor, p.attempts]),
    ).toEqual([
      [200, 'bet', 'succeeded', 'won', 1000, 1],
      [201, 'win', 'succeeded', 'won', 2000, 3],
    ]);
    expect(balances.map((b) => [b.ctx?.user_id, b.balance])).toEqual([
      ['u-200', '90.00'],
      ['u-200', '110.00'],
    ]);
  });
  it('every arrival order converges to the same rows (120 orders)', () => {
    const expected = withoutDetail(projectWallet(events).patches);
    for (const order of permutations(events))
      expect(withoutDetail(projectWallet(order).patches)).toEqual(expected);
  });
  it('a duplicated event changes nothing', () => {
    const once = projectWallet(events).patches;
    expect(projectWallet([...events, ...events]).patches).toEqual(once);
  });
  it('a rejection outranks a failed attempt, a confirmed debit outranks a rejection', () => {
    const [p] = patchesOf(bet) as [TxPatch];
    const failed: TxPatch = { ...p, status: 'failed' };
    const rejected: TxPatch = { ...p, status: 'rejected', round_status: 'cancelled' };
    const ok: TxPatch = { ...p, status: 'succeeded' };
    expect(merge(failed, rejected).status).toBe('rejected');
    expect(merge(rejected, failed).status).toBe('rejected');
    expect(merge(rejected, ok)).toMatchObject({ status: 'succeeded', round_status: 'cancelled' });
  });
  it('a demo bet is succeeded at once and its win needs no callback; a free bet waits for its registration', () => {
    const [free] = patchesOf(placed(300, 'slot', 1, { mode: 'free' }));
    expect(free?.status).toBe('pending');
    const demo = placed(304, 'slot', 1, { demo: true });
    const won = patchesOf({
      type: 'BetSettled',
      value: { tx_id: 304, bet: demo.value.bet, outcome: 'won', payout_minor: 500, win_tx_id: 305, at: T0 },
    });
    expect(won.map((x) => [x.tx_id, x.kind, x.status, x.round_status])).toEqual([
      [304, 'bet', null, 'won'],
      [305, 'win', 'succeeded', 'won'],
    ]);
  });
});
