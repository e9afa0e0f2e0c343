import { describe, expect, it } from 'vitest';
import { currencyTable } from '../../rules/money/currencies.ts';
import { balanceMinor } from './driver.ts';

describe('balanceMinor', () => {
  const c = currencyTable();
  it.each([
    ['1000.00', 'USD', 100_000],
    ['1000', 'USD', 100_000],
    ['1000.0000', 'USD', 100_000],
    [12.5, 'USD', 1250],
    ['-3.50', 'USD', -350],
    ['1250', 'JPY', 1250],
    ['1.250', 'KWD', 1250],
    ['0.00000001', 'BTC', 1],
  ] as const)('%j %s is %d minor units', (v, code, minor) => {
    expect(balanceMinor(c, v, code)).toBe(minor);
  });

  it.each([
    ['12.505', 'USD'],
    ['1e3', 'USD'],
    ['', 'USD'],
    [null, 'USD'],
    ['10', 'XYZ'],
    ['1.5', 'JPY'],
  ] as const)('reads no balance from %j %s', (v, code) => {
    expect(balanceMinor(c, v, code)).toBeUndefined();
  });
});
