/**
 * Every row of the operator answer table (rules/wallet/answers.ts) on both
 * callback forms, through the real saga, broker and Postgres against a real HTTP operator
 * (tests/support/wallet-saga.ts) scripted to answer each row; each row ends reconciled
 * (tests/support/wallet-reconcile.ts): nothing lost, nothing doubled, the money rules held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCallback } from '../../lib/db/wallet-callbacks.ts';
import type { WalletEvent } from '../../lib/log/wallet-events.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import { reconcileSaga } from '../support/wallet-reconcile.ts';
import {
  betLost,
  betPlaced,
  betWon,
  eventsOf,
  type SagaEnv,
  sagaOver,
  startedSaga,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from '../support/wallet-saga.ts';

const START = 10_000;

interface Rig {
  op: TestOperator;
  env: SagaEnv;
  saga: WalletSaga;
}

async function rig(form: 'A' | 'B', answerTable: unknown): Promise<Rig> {
  const op = await startTestOperator(START);
  const env = await startSagaEnv(op, { form, timeoutMs: 1000, answerTable });
  const saga = await startedSaga(sagaOver(env));
  return { op, env, saga };
}

const until = <T>(what: string, check: () => T | undefined) => waitFor(what, check, 20_000, 25);
const types = (r: Rig, tx: number) =>
  r.env.events
    .filter((e) => {
      const v = e.value as { tx_id: number; bet_tx_id?: number; linked_tx_id?: number };
      return v.tx_id === tx || v.bet_tx_id === tx || v.linked_tx_id === tx;
    })
    .map((e) => `${e.type}${'kind' in e.value ? `:${e.value.kind}` : ''}`);
const value = (r: Rig, type: WalletEvent['type'], tx: number) =>
  eventsOf(r.env.events, type, tx)[0]?.value as Record<string, unknown> | undefined;

let tx = 20_000;
const next = () => {
  tx += 4;
  return tx;
};

describe.each([
  ['A', 'seed'],
  ['B', 'seed'],
  ['A', 'status-in-body'],
  ['B', 'status-in-body'],
] as const)('form %s, preset %s', (form, preset) => {
  let r: Rig;
  const inBody = preset === 'status-in-body';
  /** A refusal as this preset's operator answers it. */
  const refusal = (code: string, hub88: string) =>
    inBody
      ? { status: 200, body: { status: hub88 } }
      : { status: 402, body: { error: { code, message: code } } };
  /** A duplicate answer (after booking), with `amount` echoed. */
  const duplicate = (amount: string) =>
    inBody
      ? // Hub88: a duplicate is the first answer only when it carries it (its operator_tx_id).
        { status: 200, body: { status: 'RS_ERROR_DUPLICATE_TRANSACTION', amount, operator_tx_id: 'first' } }
      : { status: 409, body: { error: { code: 'DUPLICATE_TRANSACTION', message: 'seen' }, amount } };
  const unknownTx = inBody
    ? { status: 200, body: { status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' } }
    : { status: 404, body: { error: { code: 'UNKNOWN_TRANSACTION', message: 'never booked' } } };

  beforeAll(async () => {
    r = await rig(form, preset);
    // status-in-body: success is RS_OK in the body of a 200.
    if (inBody) r.op.okStatus('RS_OK');
  }, 60_000);
  afterAll(async () => {
    await r?.saga.stop();
    await r?.env.close();
    await r?.op.close();
  });

  const player = async (name: string) => {
    const user = `${form}${preset}-${name}`;
    return { user, bet: await r.env.session(user) };
  };
  const reconciled = () => expect(reconcileSaga(r.env.events, r.op, START)).toEqual([]);

  it('success: the debit is confirmed, the win credited once', async () => {
    const { user, bet } = await player('ok');
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('debit', () => value(r, 'CallbackSucceeded', t));
    await r.env.append(bet, [betWon(bet, t, 2500)]);
    await until('credit', () => value(r, 'CallbackSucceeded', t + 1));
    expect(r.op.balance(user)).toBe(START - 1000 + 2500);
    reconciled();
  });

  it('a refusal (insufficient funds) rejects the bet: no rollback, no money moved', async () => {
    const { user, bet } = await player('refused');
    r.op.fault(user, 'bet', () => ({
      reply: refusal('INSUFFICIENT_FUNDS', 'RS_ERROR_NOT_ENOUGH_MONEY'),
      commit: false,
    }));
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('rejected', () => value(r, 'BetRejected', t));
    expect(value(r, 'BetRejected', t)).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await new Promise((res) => setTimeout(res, 300));
    expect(types(r, t)).toEqual(['BetPlaced', 'CallbackFailed:bet', 'BetRejected']);
    expect(
      r.op.requests.filter((q) => q.kind === 'rollback' && String(q.body.linked_tx_id) === String(t)),
    ).toEqual([]);
    expect(r.op.balance(user)).toBe(START);
    reconciled();
  });

  it('a duplicate that matches is the first answer: debited once, no rollback', async () => {
    const { user, bet } = await player('dup');
    r.op.fault(user, 'bet', () => ({ reply: duplicate('10.00'), commit: true }));
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('debit', () => value(r, 'CallbackSucceeded', t));
    expect(value(r, 'CallbackSucceeded', t)).toMatchObject({ kind: 'bet', answer: 'duplicate' });
    await r.env.append(bet, [betWon(bet, t, 3000)]);
    await until('credit', () => value(r, 'CallbackSucceeded', t + 1));
    expect(r.op.balance(user)).toBe(START - 1000 + 3000);
    expect(types(r, t)).not.toContain('RollbackRequested');
    reconciled();
  });

  it('a duplicate that does not match is parked for ops with both bodies, guessing neither way', async () => {
    const { user, bet } = await player('mismatch');
    r.op.fault(user, 'bet', () => ({ reply: duplicate('99.00'), commit: true }));
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('rejected', () => value(r, 'BetRejected', t));
    expect(value(r, 'BetRejected', t)).toMatchObject({ code: 'DUPLICATE_MISMATCH' });
    expect(value(r, 'CallbackFailed', t)).toMatchObject({ answer: 'mismatch', parked: true });
    const row = await getCallback(r.env.sql, t);
    expect(row).toMatchObject({ status: 'parked', last_answer: 'mismatch' });
    expect(JSON.parse(row?.last_request ?? '{}')).toMatchObject({
      amount: '10.00',
      provider_tx_id: form === 'A' ? t : t,
    });
    expect(row?.last_response).toContain('99.00');
    await new Promise((res) => setTimeout(res, 300));
    expect(types(r, t)).not.toContain('RollbackRequested');
    // The operator holds the stake it booked; ops decide (the reconciliation leaves the bet to them).
    expect(r.op.balance(user)).toBe(START - 1000);
    reconciled();
  });

  it.each([
    ['a 500', () => 'error500' as const, 'OPERATOR_ERROR'],
    ['no answer in time', () => ({ delayMs: 1500 }), 'TIMEOUT'],
    ['a malformed answer after booking', () => 'malformedAfterCommit' as const, 'OPERATOR_ERROR'],
  ])(
    'anything else on a bet (%s) rolls it back: the player ends where they started',
    async (_n, fault, code) => {
      const { user, bet } = await player(`fail-${code}-${next()}`);
      r.op.fault(user, 'bet', fault);
      const t = next();
      await r.env.append(bet, [betPlaced(bet, t)]);
      await until('rollback acknowledged', () => value(r, 'CallbackSucceeded', t + 2));
      expect(value(r, 'BetRejected', t)).toMatchObject({ code });
      await until('balance restored', () => (r.op.balance(user) === START ? true : undefined));
      reconciled();
    },
  );

  it('a rollback answered "unknown transaction" is complete', async () => {
    const { user, bet } = await player('unknown');
    r.op.fault(user, 'bet', () => 'error500');
    r.op.fault(user, 'rollback', () => ({ reply: unknownTx, commit: true }));
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('rollback complete', () => value(r, 'CallbackSucceeded', t + 2));
    expect(value(r, 'CallbackSucceeded', t + 2)).toMatchObject({
      kind: 'rollback',
      answer: 'unknown_transaction',
      new_balance: null,
    });
    expect((await getCallback(r.env.sql, t + 2))?.status).toBe('done');
    expect(r.op.balance(user)).toBe(START);
    reconciled();
  });

  it('a win answered "duplicate" is complete: credited once', async () => {
    const { user, bet } = await player('dupwin');
    r.op.fault(user, 'win', () => ({ reply: duplicate('25.00'), commit: true }));
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('debit', () => value(r, 'CallbackSucceeded', t));
    await r.env.append(bet, [betWon(bet, t, 2500)]);
    await until('credit', () => value(r, 'CallbackSucceeded', t + 1));
    expect(value(r, 'CallbackSucceeded', t + 1)).toMatchObject({ kind: 'win', answer: 'duplicate' });
    expect(r.op.balance(user)).toBe(START - 1000 + 2500);
    reconciled();
  });

  it('a lost bet closes its round with a zero-amount win', async () => {
    const { user, bet } = await player('lost');
    const t = next();
    await r.env.append(bet, [betPlaced(bet, t)]);
    await until('debit', () => value(r, 'CallbackSucceeded', t));
    await r.env.append(bet, [betLost(bet, t)]);
    await until('closed', () => value(r, 'CallbackSucceeded', t + 1));
    expect(value(r, 'CallbackSucceeded', t + 1)).toMatchObject({ kind: 'close', amount_minor: 0 });
    const close = r.op.requests.find((q) => String(q.body.provider_tx_id) === String(t + 1));
    expect(close?.body).toMatchObject({ action: 'win', amount: '0.00' });
    expect(close?.method).toBe(form === 'A' ? 'POST' : 'GET');
    expect(r.op.balance(user)).toBe(START - 1000);
    reconciled();
  });
});
