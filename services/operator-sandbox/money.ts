/**
 * What the sandbox ledger knows of money: the currency table (ISO 4217 + CRYPTO_CURRENCIES) and
 * the first balance of an account in each currency, SANDBOX_INITIAL_BALANCE read in that
 * currency's precision (digits past its exponent dropped: "1000.50" is 1000 JPY, 1000.500 KWD).
 */
import { ConfigError } from '../../lib/errors.ts';
import { MoneyError } from '../../rules/errors.ts';
import type { Currencies } from '../../rules/money/currencies.ts';

export interface LedgerMoney {
  readonly currencies: Currencies;
  /**
   * Balance of a new account in `currency`, minor units.
   * @throws MoneyError CURRENCY_UNKNOWN for a currency not in the table.
   */
  initialMinor(currency: string): number;
}

/**
 * The ledger's money from `initialBalance` (a non-negative major-unit decimal, SANDBOX_INITIAL_BALANCE).
 * @throws ConfigError when `initialBalance` exceeds 2^53 − 1 minor units in some currency of the table.
 */
export function ledgerMoney(currencies: Currencies, initialBalance: string): LedgerMoney {
  const [whole = '0', fraction = ''] = initialBalance.split('.');
  const minorOf = new Map<string, number>();
  for (const code of currencies.codes) {
    const digits = fraction.slice(0, currencies.exponentOf(code));
    const minor = currencies.parseAmount(digits === '' ? whole : `${whole}.${digits}`, code);
    if (minor === undefined)
      throw new ConfigError(
        `SANDBOX_INITIAL_BALANCE: ${initialBalance} ${code} exceeds 2^53 − 1 minor units`,
      );
    minorOf.set(code, minor);
  }
  return {
    currencies,
    initialMinor: (currency) => {
      const minor = minorOf.get(currency);
      if (minor === undefined)
        throw new MoneyError('CURRENCY_UNKNOWN', `${currency} is not a supported currency`);
      return minor;
    },
  };
}
