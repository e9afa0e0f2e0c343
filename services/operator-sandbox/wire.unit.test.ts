import { describe, expect, it } from 'vitest';
import { currencyTable } from '../../rules/money/currencies.ts';
import { SandboxError } from './errors.ts';
import {
  bodyHash,
  canonicalJson,
  movementResponse,
  parseBalance,
  parseJsonObject,
  parseMovement as parseWith,
} from './wire.ts';

const currencies = currencyTable();
const parseMovement = (
  ...a: [Parameters<typeof parseWith>[0], Parameters<typeof parseWith>[1], Record<string, unknown>]
) => parseWith(...a, currencies);

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
    ['amount', '12.345'],
    ['amount', '-1.00'],
    ['amount', '1e2'],
    ['amount', true],
    ['provider_tx_id', -4],
    ['provider_tx_id', 2 ** 53],
    ['count_register', 1.5],
    ['currency', 'usd'],
    ['currency', 'XAU'],
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

  it.each([
    ['USD', '12.50', 1250],
    ['USD', 12.5, 1250],
    ['JPY', '1250', 1250],
    ['JPY', 1250, 1250],
    ['KWD', '1.250', 1250],
    ['BTC', '0.00000001', 1],
    ['BTC', 1e-8, 1],
    ['USD', '90071992547409.91', 2 ** 53 - 1],
  ])('%s amount %j (decimal string or JSON number) is %i minor units', (currency, amount, minor) => {
    expect(parseMovement('bet', 'A', { ...bet, currency, amount }).amountMinor).toBe(minor);
  });

  it.each([
    ['JPY', '12.5', /at most 0 decimals \(JPY\)/],
    ['JPY', 12.5, /at most 0 decimals \(JPY\)/],
    ['KWD', '1.2345', /at most 3 decimals \(KWD\)/],
    ['BTC', '0.000000001', /at most 8 decimals \(BTC\)/],
    ['USD', '90071992547409.92', /amount/],
  ])('%s refuses amount %j in another precision', (currency, amount, message) => {
    const e = refusal(() => parseMovement('bet', 'A', { ...bet, currency, amount }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toMatch(message);
  });

  it('takes "12.50" and 12.5 for one replay (the hash sees minor units)', () => {
    expect(parseMovement('bet', 'A', { ...bet, amount: '12.50' }).bodyHash).toBe(
      parseMovement('bet', 'A', { ...bet, amount: 12.5 }).bodyHash,
    );
    expect(parseMovement('bet', 'A', { ...bet, amount: '12.50' }).bodyHash).not.toBe(
      parseMovement('bet', 'A', { ...bet, amount: '12.51' }).bodyHash,
    );
  });

  it('refuses a zero bet but accepts a zero win (the round close of a lost bet) and a zero rollback', () => {
    expect(refusal(() => parseMovement('bet', 'A', { ...bet, amount: 0 })).message).toMatch(
      /bet amount must be > 0/,
    );
    const win = { ...bet, action: 'win', provider_tx_id: '5', amount: 0 };
    expect(parseMovement('win', 'B', win).amountMinor).toBe(0);
    const rb = { ...bet, action: 'rollback', provider_tx_id: 6, linked_tx_id: 4, amount: 0 };
    expect(parseMovement('rollback', 'A', rb).amountMinor).toBe(0);
  });

  it('takes a free bet registration of 0 (mode free, free_bet_id) and refuses one that moves money', () => {
    const free = { ...bet, mode: 'free', amount: '0.00', bonus_code: 'FREE10', free_bet_id: '77' };
    expect(parseMovement('bet', 'A', free)).toMatchObject({ mode: 'free', amountMinor: 0 });
    expect(refusal(() => parseMovement('bet', 'A', { ...free, amount: '1.00' })).message).toMatch(
      /free bet moves no money/,
    );
  });

  it('takes a form-B rollback without linked_tx_id (docs/contract.md "Operator callbacks": the fields of Register Earnings)', () => {
    const { bonus_code: _b, extra_data: _e, ...rest } = bet;
    const body = { ...rest, action: 'rollback', provider_tx_id: '6' };
    expect(parseMovement('rollback', 'B', body)).toMatchObject({ providerTxId: '6', linkedTxId: null });
  });
});

describe('parseJsonObject and parseBalance', () => {
  it('refuses non-JSON, arrays and null', () => {
    for (const raw of ['', '{', '[]', 'null', '3'])
      expect(refusal(() => parseJsonObject(raw)).code).toBe('BAD_REQUEST');
    expect(parseJsonObject('{"a":1}')).toEqual({ a: 1 });
  });

  it('balance needs user_id, currency and session_token', () => {
    expect(parseBalance({ user_id: 'u', currency: 'EUR', session_token: 't' }, currencies)).toEqual({
      userId: 'u',
      currency: 'EUR',
      sessionToken: 't',
    });
    expect(refusal(() => parseBalance({ user_id: 'u', currency: 'EUR' }, currencies)).message).toMatch(
      /session_token/,
    );
    expect(
      refusal(() => parseBalance({ user_id: 'u', currency: 'XTS', session_token: 't' }, currencies)).message,
    ).toMatch(/currency/);
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
    expect(movementResponse(m, '7', 10_000, 8_750, currencies)).toEqual({
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
    expect(movementResponse(rb, '8', 8_750, 10_000, currencies)).toEqual({
      operator_tx_id: '8',
      new_balance: '100.00',
      old_balance: '87.50',
      user_id: 'u1',
      currency: 'USD',
      provider: 'casino-platform',
      provider_tx_id: '6',
    });
  });

  it("answers balances with exactly the currency's digits", () => {
    const jpy = parseMovement('bet', 'A', { ...bet, currency: 'JPY', amount: 1250 });
    expect(movementResponse(jpy, '9', 10_000, 8_750, currencies)).toMatchObject({
      new_balance: '8750',
      old_balance: '10000',
    });
    const btc = parseMovement('bet', 'A', { ...bet, currency: 'BTC', amount: '0.00000001' });
    expect(movementResponse(btc, '9', 2, 1, currencies)).toMatchObject({
      new_balance: '0.00000001',
      old_balance: '0.00000002',
    });
    const kwd = parseMovement('bet', 'A', { ...bet, currency: 'KWD', amount: '1.250' });
    expect(movementResponse(kwd, '9', 2 ** 53 - 1, 0, currencies)).toMatchObject({
      new_balance: '0.000',
      old_balance: '9007199254740.991',
    });
  });
});
