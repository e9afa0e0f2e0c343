import { describe, expect, it } from 'vitest';
import { currencyTable } from '../../../rules/money/currencies.ts';
import { InvalidInputError } from '../errors.ts';
import { amountOut, currencyOf, demoStartMinor, minorOf } from './money.ts';

const currencies = currencyTable();

describe('amounts at the session API (services/api/access/money.ts)', () => {
  it.each([
    [12.5, 'USD', 1250],
    [1250, 'JPY', 1250],
    [1.25, 'KWD', 1250],
    [1e-8, 'BTC', 1],
    [57 * 0.01, 'USD', 57],
    [0.1 + 0.2, 'USD', 30],
    [1_000_000, 'BTC', 100_000_000_000_000],
  ])('%d %s is %i minor units', (amount, code, minor) => {
    expect(minorOf(currencies, amount, code, 'amount')).toBe(minor);
  });

  it.each([
    [12.5, 'JPY', /amount: must have at most 0 decimals in JPY/],
    [1.005, 'USD', /at most 2 decimals in USD/],
    [1.0005, 'KWD', /at most 3 decimals in KWD/],
    [1e-9, 'BTC', /at most 8 decimals in BTC/],
    // Positive but within float noise of 0 minor units (schemathesis sent this; it was stored as 0: 500).
    [5e-324, 'KYD', /amount: must have at most 2 decimals in KYD/],
    [1e-7, 'USD', /at most 2 decimals in USD/],
  ])('refuses %d %s', (amount, code, message) => {
    expect(() => minorOf(currencies, amount, code, 'amount')).toThrow(message);
  });

  it('takes only currencies of the table, and answers amounts in their precision', () => {
    expect(currencyOf(currencies, 'BTC')).toBe('BTC');
    for (const code of ['XAU', 'CLF', 'usd', 'XYZ'])
      expect(() => currencyOf(currencies, code)).toThrow(InvalidInputError);
    expect(amountOut(currencies, 1250, 'JPY')).toBe(1250);
    expect(amountOut(currencies, 1250, 'USD')).toBe(12.5);
    expect(amountOut(currencies, 1, 'BTC')).toBe(1e-8);
    expect(demoStartMinor(currencies, 'USD')).toBe(100_000);
    expect(demoStartMinor(currencies, 'JPY')).toBe(1000);
  });
});
