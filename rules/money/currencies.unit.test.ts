import { describe, expect, it } from 'vitest';
import { MoneyError } from '../errors.ts';
import {
  cryptoProblems,
  currencyTable,
  DEFAULT_CRYPTO,
  FUND_CODES,
  ISO_4217_PUBLISHED,
} from './currencies.ts';

const table = currencyTable();
const MAX = 2 ** 53 - 1;

describe('the currency table (rules/money/currencies.ts)', () => {
  it.each([
    ['CLP', 0],
    ['JPY', 0],
    ['KRW', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['USD', 2],
    ['EUR', 2],
    ['BRL', 2],
  ])('ISO 4217 gives %s exponent %i', (code, e) => expect(table.exponentOf(code)).toBe(e));

  it('takes the crypto precisions by default', () => {
    expect(DEFAULT_CRYPTO).toEqual({ BTC: 8, ETH: 8, LTC: 8, USDT: 6, USDC: 6 });
    for (const [code, e] of Object.entries(DEFAULT_CRYPTO)) expect(table.exponentOf(code)).toBe(e);
  });

  it('leaves out codes without a minor unit, the test codes and funds', () => {
    for (const code of ['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XTS', 'XXX', 'XBA', 'XSU', 'XUA', ...FUND_CODES])
      expect(table.isCurrency(code), code).toBe(false);
    // The fund codes are real ISO entries with a minor unit: only our policy leaves them out.
    expect(FUND_CODES).toContain('CLF');
    expect(() => table.exponentOf('XAU')).toThrow(MoneyError);
    expect(() => table.exponentOf('usd')).toThrow(/not a supported currency/);
    expect(table.isCurrency('usd')).toBe(false);
    expect(table.codes.length).toBeGreaterThan(150);
    expect(ISO_4217_PUBLISHED).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it.each([
    ['USD', 1250, '12.50', 12.5],
    ['JPY', 1250, '1250', 1250],
    ['KWD', 1250, '1.250', 1.25],
    ['BTC', 1, '0.00000001', 1e-8],
    ['USDT', 1_500_000, '1.500000', 1.5],
  ])('%s: %i minor units are %j on the wire (%d as a JSON number)', (code, minor, text, n) => {
    expect(table.formatMinor(minor, code)).toBe(text);
    expect(table.wireAmount(minor, code)).toBe(text);
    expect(table.wireAmount(minor, code, 'string')).toBe(text);
    expect(table.wireAmount(minor, code, 'number')).toBe(n);
    expect(table.parseAmount(text, code)).toBe(minor);
    expect(table.parseAmount(n, code)).toBe(minor);
  });

  it.each([
    ['JPY', 0],
    ['USD', 2],
    ['KWD', 3],
    ['BTC', 8],
  ])('%s (exponent %i): 0, one minor unit and 2^53 − 1 round-trip through the wire string', (code) => {
    for (const minor of [0, 1, MAX])
      expect(table.parseAmount(table.wireAmount(minor, code) as string, code)).toBe(minor);
  });

  it('refuses amounts in the wrong precision, negative, beyond 2^53 − 1, or of an unknown currency', () => {
    expect(table.parseAmount('12.5', 'JPY')).toBeUndefined();
    expect(table.parseAmount(12.5, 'JPY')).toBeUndefined();
    expect(table.parseAmount('1.2345', 'KWD')).toBeUndefined();
    expect(table.parseAmount('0.000000001', 'BTC')).toBeUndefined();
    expect(table.parseAmount(-1, 'USD')).toBeUndefined();
    expect(table.parseAmount('90071992547409.92', 'USD')).toBeUndefined();
    expect(table.parseAmount('1', 'XAU')).toBeUndefined();
    expect(() => table.wireAmount(-1, 'USD')).toThrow(/never negative/);
    expect(() => table.wireAmount(MAX, 'BTC', 'number')).toThrow(/decimal string/);
    expect(() => table.formatMinor(1, 'XXX')).toThrow(/not a supported currency/);
  });

  it('takes a configured crypto list instead of the defaults', () => {
    const t = currencyTable({ SOL: 9, DOGE: 8 });
    expect(t.exponentOf('SOL')).toBe(9);
    expect(t.formatMinor(1, 'SOL')).toBe('0.000000001');
    expect(t.isCurrency('BTC')).toBe(false);
    expect(t.exponentOf('USD')).toBe(2);
    expect(currencyTable({}).isCurrency('BTC')).toBe(false);
  });

  it('refuses a crypto setting that names an ISO code, a bad code or a bad precision', () => {
    expect(cryptoProblems({ USD: 8 })).toEqual(['USD: an ISO 4217 code, whose exponent ISO gives']);
    expect(cryptoProblems({ XAU: 8 })).toHaveLength(1);
    expect(cryptoProblems({ btc: 8 })).toHaveLength(1);
    expect(cryptoProblems({ BTC: 13 })).toHaveLength(1);
    expect(cryptoProblems({ BTC: 1.5 })).toHaveLength(1);
    expect(cryptoProblems(DEFAULT_CRYPTO)).toEqual([]);
    expect(() => currencyTable({ EUR: 2, ETH: -1 })).toThrow(/EUR.*ETH/);
  });
});
