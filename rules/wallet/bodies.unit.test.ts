import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE } from '../retry/schedule.ts';
import { answerTable } from './answers.ts';
import { buildBalanceRequest, buildRequest, type CallbackJob, type OperatorConfig } from './bodies.ts';
import type { BetContext } from './events.ts';

const bet: BetContext = {
  session_id: '00000000-0000-4000-8000-000000000001',
  operator_id: 'op1',
  user_id: 'u1',
  currency: 'EUR',
  game: 'crash',
  round_id: 1_000_000_000_042,
  amount_minor: 1250,
  mode: 'default',
  bonus_code: null,
  free_bet_id: null,
  count_register: 2,
  demo: false,
};
const op = (form: 'A' | 'B'): OperatorConfig => ({
  operatorId: 'op1',
  form,
  baseUrl: 'http://127.0.0.1:9/base',
  betPath: '/wallet/bet',
  winPath: '/wallet/win',
  rollbackPath: '/wallet/rollback',
  signingSecret: `whsec_${Buffer.from('secret-secret-secret').toString('base64')}`,
  timeoutMs: 1000,
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  answers: answerTable('seed'),
  roundClose: 'zero-win',
  roundEndPath: null,
  amountFormat: 'string',
});
const session = { sessionToken: 'st_1', extraData: '{"x":1}' };
const job = (kind: CallbackJob['kind'], amountMinor = 1250): CallbackJob => ({
  kind,
  txId: kind === 'bet' ? 40 : kind === 'win' ? 41 : 42,
  betTxId: 40,
  amountMinor,
  bet,
});

describe('buildRequest', () => {
  it('bet: POST bet_path with every field of the contract, ids as integers, amount a decimal string in the currency precision', () => {
    for (const form of ['A', 'B'] as const) {
      const r = buildRequest(job('bet'), op(form), session);
      expect(r.method).toBe('POST');
      expect(r.url).toBe('http://127.0.0.1:9/base/wallet/bet');
      expect(r.webhookId).toBe('bet-40');
      expect(r.body).toStrictEqual({
        user_id: 'u1',
        currency: 'EUR',
        amount: '12.50',
        provider: 'casino-platform',
        provider_tx_id: 40,
        game: 'crash',
        action: 'bet',
        round_id: '1000000000042',
        mode: 'default',
        count_register: 2,
        session_token: 'st_1',
        bonus_code: null,
        extra_data: '{"x":1}',
      });
    }
  });

  it('win form A: POST win_path, provider_tx_id and linked_tx_id integers, agreggator', () => {
    const r = buildRequest(job('win', 3000), op('A'), session);
    expect(r).toStrictEqual({
      method: 'POST',
      url: 'http://127.0.0.1:9/base/wallet/win',
      webhookId: 'win-41',
      body: {
        user_id: 'u1',
        currency: 'EUR',
        amount: '30.00',
        provider: 'casino-platform',
        provider_tx_id: 41,
        game: 'crash',
        action: 'win',
        round_id: '1000000000042',
        count_register: 2,
        session_token: 'st_1',
        linked_tx_id: 40,
        mode: 'default',
        agreggator: 'casino-platform',
        bonus_code: null,
      },
    });
  });

  it('rewards form B: GET /webhooks/platform/rewards, provider_tx_id a string, no linked_tx_id', () => {
    const r = buildRequest(job('win', 3001), op('B'), session);
    expect(r).toStrictEqual({
      method: 'GET',
      url: 'http://127.0.0.1:9/base/webhooks/platform/rewards',
      webhookId: 'win-41',
      body: {
        user_id: 'u1',
        currency: 'EUR',
        amount: '30.01',
        provider: 'casino-platform',
        provider_tx_id: '41',
        game: 'crash',
        action: 'win',
        round_id: '1000000000042',
        mode: 'default',
        count_register: 2,
        session_token: 'st_1',
      },
    });
  });

  it("rollback: form A POST with integer ids linked to the bet, form B GET with Register Earnings' fields", () => {
    const a = buildRequest(job('rollback'), op('A'), session);
    const b = buildRequest(job('rollback'), op('B'), session);
    const fields = {
      user_id: 'u1',
      currency: 'EUR',
      amount: '12.50',
      provider: 'casino-platform',
      game: 'crash',
      action: 'rollback',
      round_id: '1000000000042',
      mode: 'default',
      count_register: 2,
      session_token: 'st_1',
    };
    expect(a.method).toBe('POST');
    expect(a.url).toBe('http://127.0.0.1:9/base/wallet/rollback');
    expect(a.webhookId).toBe('rollback-42');
    expect(a.body).toStrictEqual({ ...fields, provider_tx_id: 42, linked_tx_id: 40 });
    expect(b.method).toBe('GET');
    expect(b.url).toBe('http://127.0.0.1:9/base/webhooks/platform/rollback');
    // Form B: "the same fields as Register Earnings" (docs/contract.md "Operator callbacks"), so no linked_tx_id.
    expect(b.body).toStrictEqual({ ...fields, provider_tx_id: '42' });
  });
});

describe('round close of a lost bet', () => {
  it("zero-win: the form's own win with amount 0 under the win id", () => {
    const close = { ...job('win'), kind: 'close' as const, amountMinor: 0 };
    const a = buildRequest(close, op('A'), session);
    const b = buildRequest(close, op('B'), session);
    expect(a).toMatchObject({
      method: 'POST',
      url: 'http://127.0.0.1:9/base/wallet/win',
      webhookId: 'win-41',
    });
    expect(a.body).toMatchObject({ action: 'win', amount: '0.00', provider_tx_id: 41, linked_tx_id: 40 });
    expect(b).toMatchObject({ method: 'GET', url: 'http://127.0.0.1:9/base/webhooks/platform/rewards' });
    expect(b.body).toMatchObject({ action: 'win', amount: '0.00', provider_tx_id: '41' });
  });

  it("round-end: a POST on the operator's path naming the bet; none sends nothing", () => {
    const close = { ...job('win'), kind: 'close' as const, amountMinor: 0 };
    const roundEnd = { ...op('A'), roundClose: 'round-end' as const, roundEndPath: '/wallet/round-end' };
    const r = buildRequest(close, roundEnd, session);
    expect(r).toMatchObject({
      method: 'POST',
      url: 'http://127.0.0.1:9/base/wallet/round-end',
      webhookId: 'round_end-41',
    });
    expect(r.body).toStrictEqual({
      user_id: 'u1',
      currency: 'EUR',
      amount: '0.00',
      provider: 'casino-platform',
      provider_tx_id: 41,
      linked_tx_id: 40,
      game: 'crash',
      action: 'round_end',
      round_id: '1000000000042',
      session_token: 'st_1',
    });
    expect(() => buildRequest(close, { ...op('A'), roundClose: 'none' }, session)).toThrow(
      /closes no rounds/,
    );
    expect(() => buildRequest(close, { ...roundEnd, roundEndPath: null }, session)).toThrow(/round_end_path/);
  });
});

describe('amounts on the wire', () => {
  const inCurrency = (currency: string, amountMinor: number, amountFormat: 'string' | 'number' = 'string') =>
    buildRequest(
      { ...job('bet', amountMinor), bet: { ...bet, currency, amount_minor: amountMinor } },
      { ...op('A'), amountFormat },
      session,
    ).body.amount;

  it("a decimal string with the currency's ISO 4217 or crypto exponent", () => {
    expect(inCurrency('JPY', 1250)).toBe('1250');
    expect(inCurrency('KWD', 1250)).toBe('1.250');
    expect(inCurrency('BTC', 1)).toBe('0.00000001');
    expect(inCurrency('USD', Number.MAX_SAFE_INTEGER)).toBe('90071992547409.91');
  });

  it("a JSON number for an operator whose amount_format is 'number'", () => {
    expect(inCurrency('EUR', 1250, 'number')).toBe(12.5);
    expect(inCurrency('JPY', 7, 'number')).toBe(7);
  });

  it('refuses a currency it does not know (the dispatcher parks the callback)', () => {
    expect(() => inCurrency('XTS', 1)).toThrow(/XTS/);
  });
});

describe('buildBalanceRequest', () => {
  it('POSTs exactly user_id, currency and session_token to the balance path, in that order', () => {
    const req = buildBalanceRequest(
      { baseUrl: 'http://127.0.0.1:9/base', balancePath: '/wallet/balance' },
      { userId: 'u1', currency: 'EUR', sessionToken: 'st_1' },
      'balance-x',
    );
    expect(req).toEqual({
      method: 'POST',
      url: 'http://127.0.0.1:9/base/wallet/balance',
      webhookId: 'balance-x',
      body: { user_id: 'u1', currency: 'EUR', session_token: 'st_1' },
    });
    expect(JSON.stringify(req.body)).toBe('{"user_id":"u1","currency":"EUR","session_token":"st_1"}');
  });

  it('joins a balance path without its leading slash with one slash, as every callback URL', () => {
    const req = buildBalanceRequest(
      { baseUrl: 'http://127.0.0.1:9', balancePath: 'wallet/balance' },
      { userId: 'u1', currency: 'EUR', sessionToken: 'st_1' },
      'balance-y',
    );
    expect(req.url).toBe('http://127.0.0.1:9/wallet/balance');
  });
});
