/**
 * The processes' batch (processes.ts applyBatch) over a log the earlier settlement wrote, when
 * settlement itself appended the RollbackRequested of a bet it cancelled after its debit, right
 * after its BetRejected (docs/decisions/money/0011-first-close-and-upgrade-order.md).
 * The saga now asks for that rollback on the BetRejected; reading the old RollbackRequested after
 * it asks for nothing more: one rollback callback (one provider_tx_id, one refund), in one batch or
 * split between two, and a replay of the same records asks for nothing again.
 */
import { describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from '../../rules/wallet/events.ts';
import type { BetProcess } from '../../rules/wallet/process.ts';
import { applyBatch, type Input } from './processes.ts';

const TX = 600;
const bet: BetContext = {
  session_id: '00000000-0000-4000-8000-000000000001',
  operator_id: 'op1',
  user_id: 'u1',
  currency: 'EUR',
  game: 'double',
  round_id: 7,
  amount_minor: 1000,
  mode: 'default',
  bonus_code: null,
  free_bet_id: null,
  count_register: 1,
  demo: false,
};
const OLD_LOG: WalletEvent[] = [
  {
    type: 'BetPlaced',
    value: { tx_id: TX, bet, selection: { 'casino.wallet.DoubleBet': { color: 'red' } }, placed_at: 1 },
  },
  {
    type: 'CallbackSucceeded',
    value: {
      tx_id: TX,
      bet_tx_id: TX,
      kind: 'bet',
      operator_tx_id: 'o',
      old_balance: '10.00',
      new_balance: '0.00',
      amount_minor: 1000,
      answer: 'ok',
      attempts: 1,
      at: 2,
    },
  },
  { type: 'BetRejected', value: { tx_id: TX, code: 'ROUND_CLOSED', reason: 'late', at: 3 } },
  // The earlier settlement's own request, in the same send as its BetRejected.
  {
    type: 'RollbackRequested',
    value: { tx_id: TX + 2, linked_tx_id: TX, bet, reason: 'late', at: 3 },
  },
];
const inputs = (events: readonly WalletEvent[], from: number): Input[] =>
  events.map((event, i) => ({ event, offset: BigInt(from + i) }));

/** Runs `cuts` consecutive batches of the old log over one state map. */
function run(cuts: readonly number[]) {
  const states = new Map<number, BetProcess>();
  const rollbacks: number[] = [];
  let requested = 0;
  let from = 0;
  for (const to of [...cuts, OLD_LOG.length]) {
    const r = applyBatch(inputs(OLD_LOG.slice(from, to), from), states, 10);
    rollbacks.push(...r.callbacks.filter((c) => c.job.kind === 'rollback').map((c) => c.job.txId));
    requested += r.events.filter((e) => e.type === 'RollbackRequested').length;
    from = to;
  }
  return { states, rollbacks, requested };
}

describe('an old log (settlement appended the RollbackRequested)', () => {
  it('one rollback callback, whether the pair is in one batch or split', () => {
    for (const cuts of [[], [3], [2], [1, 3]]) {
      const r = run(cuts);
      // The callback row is keyed by its tx id (store.ts: on conflict do nothing): one refund.
      expect(new Set(r.rollbacks), `cuts ${cuts}`).toEqual(new Set([TX + 2]));
      // The saga's own request, beside the old one on the log (same tx id).
      expect(r.requested, `cuts ${cuts}`).toBe(1);
      expect(r.states.get(TX)?.rollback).toBe('requested');
    }
  });

  it('a replay of the records over the stored state asks for nothing', () => {
    const { states } = run([]);
    const again = applyBatch(inputs(OLD_LOG, 0), states, 20);
    expect(again.events).toEqual([]);
    expect(again.violations).toEqual([]);
    // Only the rollback's id is asked again, keyed by tx id: the stored row stays as it is.
    expect(again.callbacks.map((c) => c.job.txId)).toEqual([TX + 2]);
  });
});
