import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../retry/schedule.ts';
import { buildRequest, type CallbackJob, classifyResponse, type OperatorConfig } from './bodies.ts';
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
  retryPolicy: DEFAULT_RETRY_POLICY,
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
  it('bet: POST bet_path with every field of the contract, ids as integers, amount in major units', () => {
    for (const form of ['A', 'B'] as const) {
      const r = buildRequest(job('bet'), op(form), session);
      expect(r.method).toBe('POST');
      expect(r.url).toBe('http://127.0.0.1:9/base/wallet/bet');
      expect(r.webhookId).toBe('bet-40');
      expect(r.body).toStrictEqual({
        user_id: 'u1',
        currency: 'EUR',
        amount: 12.5,
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
        amount: 30,
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
        amount: 30.01,
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

  it('rollback: form A POST with integer ids, form B GET with string ids, linked to the bet', () => {
    const a = buildRequest(job('rollback'), op('A'), session);
    const b = buildRequest(job('rollback'), op('B'), session);
    const fields = {
      user_id: 'u1',
      currency: 'EUR',
      amount: 12.5,
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
    expect(b.body).toStrictEqual({ ...fields, provider_tx_id: '42', linked_tx_id: '40' });
  });
});

describe('classifyResponse', () => {
  const winA = buildRequest(job('win'), op('A'), session);
  const rewardsB = buildRequest(job('win'), op('B'), session);
  const ack = { operator_tx_id: 'o-1', old_balance: '10.00', new_balance: '22.50' };

  it('200 with the fields is ok', () => {
    expect(classifyResponse(winA, 200, JSON.stringify(ack))).toEqual({
      type: 'ok',
      ack: { operatorTxId: 'o-1', oldBalance: '10.00', newBalance: '22.50' },
    });
  });

  it('form B must echo user_id, currency, provider and provider_tx_id', () => {
    expect(classifyResponse(rewardsB, 200, JSON.stringify(ack)).type).toBe('failed');
    const echoed = {
      ...ack,
      user_id: 'u1',
      currency: 'EUR',
      provider: 'casino-platform',
      provider_tx_id: '41',
    };
    expect(classifyResponse(rewardsB, 200, JSON.stringify(echoed)).type).toBe('ok');
    expect(classifyResponse(rewardsB, 200, JSON.stringify({ ...echoed, provider_tx_id: '45' })).type).toBe(
      'failed',
    );
  });

  it.each([
    ['malformed JSON', 200, '{"operator_tx_id":'],
    ['empty body', 200, ''],
    ['missing new_balance', 200, JSON.stringify({ operator_tx_id: 'x', old_balance: '1.00' })],
    ['numeric balance', 200, JSON.stringify({ ...ack, new_balance: 22.5 })],
    ['non-decimal balance', 200, JSON.stringify({ ...ack, new_balance: 'lots' })],
    ['500', 500, '{"error":{"code":"INTERNAL","message":"x"}}'],
    ['401', 401, '{"error":{"code":"INVALID_SIGNATURE","message":"x"}}'],
    ['404', 404, 'not found'],
    ['429', 429, ''],
  ])('%s is a failure (outcome unknown)', (_name, status, body) => {
    const v = classifyResponse(winA, status, body);
    expect(v.type).toBe('failed');
    expect(v.type === 'failed' && v.code).toBe('OPERATOR_ERROR');
  });

  it('402 and 409 are refusals carrying the operator code', () => {
    const v = classifyResponse(
      winA,
      402,
      JSON.stringify({ error: { code: 'INSUFFICIENT_FUNDS', message: 'no' } }),
    );
    expect(v).toMatchObject({ type: 'refused', status: 402, code: 'INSUFFICIENT_FUNDS' });
    expect(classifyResponse(winA, 409, 'x')).toMatchObject({ type: 'refused', code: 'HTTP_409' });
  });
});
