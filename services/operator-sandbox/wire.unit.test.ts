import { describe, expect, it } from 'vitest';
import { SandboxError } from './errors.ts';
import {
  bodyHash,
  canonicalJson,
  movementResponse,
  parseBalance,
  parseJsonObject,
  parseMovement,
} from './wire.ts';

const bet = {
  user_id: 'u1',
  currency: 'USD',
  amount: 12.5,
  provider: 'casino-platform',
  provider_tx_id: 4,
  game: 'crash',
  action: 'bet',
  round_id: '1000000000001',
  mode: 'default',
  count_register: 1,
  session_token: 's',
  bonus_code: null,
  extra_data: null,
};

function refusal(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxError) return err;
    throw err;
  }
  throw new Error('expected a SandboxError');
}

describe('parseMovement', () => {
  it('normalises a form-A bet: minor units, string ids, no link', () => {
    const m = parseMovement('bet', 'A', bet);
    expect(m).toMatchObject({
      kind: 'bet',
      amountMinor: 1250,
      providerTxId: '4',
      linkedTxId: null,
      roundId: bet.round_id,
    });
  });

  it('form-B rollback ids are strings and keep the link', () => {
    const body = { ...bet, action: 'rollback', provider_tx_id: '6', linked_tx_id: '4', amount: 0 };
    delete (body as Record<string, unknown>).bonus_code;
    expect(parseMovement('rollback', 'B', body)).toMatchObject({
      providerTxId: '6',
      linkedTxId: '4',
      amountMinor: 0,
    });
  });

  it.each([
    ['amount', -0.01],
    ['amount', Number.POSITIVE_INFINITY],
    ['amount', Number.NaN],
    ['amount', 0.001],
    ['provider_tx_id', -4],
    ['provider_tx_id', 2 ** 53],
    ['count_register', 1.5],
    ['currency', 'usd'],
    ['user_id', ''],
  ])('refuses %s = %s with BAD_REQUEST naming the field', (field, value) => {
    const e = refusal(() => parseMovement('bet', 'A', { ...bet, [field]: value }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain(field);
  });

  it('lists every bad field in one message', () => {
    const e = refusal(() => parseMovement('win', 'A', { ...bet, action: 'win' }));
    expect(e.message).toMatch(/linked_tx_id/);
    expect(e.message).toMatch(/agreggator/);
  });

  it('refuses a zero win but accepts a zero rollback', () => {
    const win = { ...bet, action: 'win', provider_tx_id: '5', amount: 0 };
    expect(refusal(() => parseMovement('win', 'B', win)).message).toMatch(/win amount must be > 0/);
    const rb = { ...bet, action: 'rollback', provider_tx_id: 6, linked_tx_id: 4, amount: 0 };
    expect(parseMovement('rollback', 'A', rb).amountMinor).toBe(0);
  });
});

describe('parseJsonObject and parseBalance', () => {
  it('refuses non-JSON, arrays and null', () => {
    for (const raw of ['', '{', '[]', 'null', '3'])
      expect(refusal(() => parseJsonObject(raw)).code).toBe('BAD_REQUEST');
    expect(parseJsonObject('{"a":1}')).toEqual({ a: 1 });
  });

  it('balance needs user_id, currency and session_token', () => {
    expect(parseBalance({ user_id: 'u', currency: 'EUR', session_token: 't' })).toEqual({
      userId: 'u',
      currency: 'EUR',
      sessionToken: 't',
    });
    expect(refusal(() => parseBalance({ user_id: 'u', currency: 'EUR' })).message).toMatch(/session_token/);
  });
});

describe('body hash', () => {
  it('ignores key order at every level but not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"x":2,"y":1}]},"b":1}',
    );
    expect(bodyHash({ a: 1, b: 2 })).toBe(bodyHash({ b: 2, a: 1 }));
    expect(bodyHash({ a: 1, b: 2 })).not.toBe(bodyHash({ a: 1, b: 3 }));
  });
});

describe('movementResponse', () => {
  it('bet and form-A win: three strings; rewards and rollback also echo the ids', () => {
    const m = parseMovement('bet', 'A', bet);
    expect(movementResponse(m, '7', 10_000, 8_750)).toEqual({
      operator_tx_id: '7',
      new_balance: '87.50',
      old_balance: '100.00',
    });
    const rb = parseMovement('rollback', 'A', {
      ...bet,
      action: 'rollback',
      provider_tx_id: 6,
      linked_tx_id: 4,
    });
    expect(movementResponse(rb, '8', 8_750, 10_000)).toEqual({
      operator_tx_id: '8',
      new_balance: '100.00',
      old_balance: '87.50',
      user_id: 'u1',
      currency: 'USD',
      provider: 'casino-platform',
      provider_tx_id: '6',
    });
  });
});
