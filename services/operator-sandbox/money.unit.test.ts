import { describe, expect, it } from 'vitest';
import { currencyTable } from '../../rules/money/currencies.ts';
import { ledgerMoney } from './money.ts';

describe('the sandbox first balance per currency (money.ts)', () => {
  const currencies = currencyTable();

  it("reads SANDBOX_INITIAL_BALANCE in each currency's precision", () => {
    const m = ledgerMoney(currencies, '1000.50');
    expect(m.initialMinor('USD')).toBe(100_050);
    expect(m.initialMinor('JPY')).toBe(1000);
    expect(m.initialMinor('KWD')).toBe(1_000_500);
    expect(m.initialMinor('BTC')).toBe(100_050_000_000);
    expect(ledgerMoney(currencies, '0').initialMinor('USD')).toBe(0);
  });

  it('refuses an unknown currency, and a balance beyond 2^53 − 1 minor units at start', () => {
    expect(() => ledgerMoney(currencies, '1000').initialMinor('XAU')).toThrow(/not a supported currency/);
    expect(() => ledgerMoney(currencies, '100000000')).toThrow(
      /SANDBOX_INITIAL_BALANCE: 100000000 (BTC|ETH|LTC)/,
    );
  });
});
