/**
 * The currencies the platform takes and each one's exponent (digits after the point of its major
 * unit): ISO 4217 from the maintained `fresh-currency-codes` package (its data mirrors the ISO
 * maintenance agency's list one, refreshed weekly; we keep no exponent table of our own), plus the
 * crypto currencies and precisions the deployment configures (CRYPTO_CURRENCIES,
 * lib/config/shared.ts). Pure: the table is data built once per process and passed down.
 *
 * Left out of ISO's list: codes without a minor unit (ISO "N.A.": gold, silver, platinum,
 * palladium, SDR, the bond-market units, XSU, XUA, the test code XTS and XXX, "no currency") and
 * the fund codes ISO marks IsFund (FUND_CODES). Nobody stakes in them.
 *
 * Amounts inside the platform are integers in minor units (0 … 2^53 − 1); on the wire they are
 * decimal strings with exactly the exponent's digits ("12.50" USD, "1250" JPY, "1.250" KWD,
 * "0.00000001" BTC), or, for an operator configured so, JSON numbers (docs/decisions/money/0007-amounts-on-the-wire.md).
 */
import { currencies as isoCurrencies, publishDate } from 'fresh-currency-codes';
import { MoneyError } from '../errors.ts';
import { formatScaled, numberOfScaled, parseScaled } from './decimal.ts';

/** Publication date of the ISO 4217 list the package carries (YYYY-MM-DD). */
export const ISO_4217_PUBLISHED: string = publishDate;

/**
 * Fund codes of ISO 4217 (entries its list one marks IsFund): units of account beside a
 * country's currency, never a player's wallet currency.
 */
export const FUND_CODES: readonly string[] = ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI'];

/**
 * Crypto precisions taken when CRYPTO_CURRENCIES is not set. 8 for BTC and LTC (their smallest
 * on-chain unit, the satoshi and litoshi) and for ETH (the common wallet precision: wei's 18
 * digits would cap amounts at 0.009 ETH in 2^53 − 1 minor units), 6 for USDT and USDC (their
 * token decimals).
 */
export const DEFAULT_CRYPTO: Readonly<Record<string, number>> = Object.freeze({
  BTC: 8,
  ETH: 8,
  LTC: 8,
  USDT: 6,
  USDC: 6,
});

/** Largest configurable crypto precision: at 12 the largest amount is already only 9007.199… */
export const MAX_CRYPTO_PRECISION = 12;
/** A crypto code: an upper-case letter, then 1 to 9 upper-case letters or digits. */
export const CRYPTO_CODE = /^[A-Z][A-Z0-9]{1,9}$/;

/** How a callback carries an amount: a decimal string (default) or a JSON number in major units. */
export type AmountFormat = 'string' | 'number';

/** A currency table; see `currencyTable`. */
export interface Currencies {
  /** Every accepted code, sorted. */
  readonly codes: readonly string[];
  /** True when `code` is an accepted currency (case-sensitive: "usd" is not). */
  isCurrency(code: string): boolean;
  /**
   * Digits after the point of `code`'s major unit: JPY 0, USD 2, KWD 3, BTC 8 (by default).
   * @throws MoneyError CURRENCY_UNKNOWN for a code that is not accepted.
   */
  exponentOf(code: string): number;
  /**
   * `minor` minor units of `code` as a decimal string with exactly its exponent's digits:
   * (1250, USD) → "12.50", (1250, JPY) → "1250", (1250, KWD) → "1.250", (1, BTC) → "0.00000001".
   * @throws MoneyError CURRENCY_UNKNOWN; AMOUNT_INVALID when `minor` is not a safe integer.
   */
  formatMinor(minor: number, code: string): string;
  /**
   * A major-unit amount of `code` (JSON number or decimal string) in minor units: (12.5, USD) →
   * 1250, ("1.250", KWD) → 1250.
   * @returns undefined when `code` is not accepted, or the amount is negative, not finite, not a
   *   plain decimal, has more digits after the point than the exponent, or exceeds 2^53 − 1 minor units.
   */
  parseAmount(amount: number | string, code: string): number | undefined;
  /**
   * The `amount` of a callback body: `minor` of `code` as the decimal string of `formatMinor`
   * (format `string`, the default), or as a JSON number in major units (format `number`, for an
   * operator that reads docs/contract.md "Operator callbacks"'s "amount: number" literally).
   * @throws MoneyError CURRENCY_UNKNOWN; AMOUNT_INVALID for a negative or non-safe-integer `minor`;
   *   AMOUNT_INEXACT (format `number` only) when no JSON number denotes the amount exactly.
   */
  wireAmount(minor: number, code: string, format?: AmountFormat): string | number;
}

/** The ISO 4217 currencies that have a minor unit and are no fund: code → exponent. */
function isoExponents(): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of isoCurrencies())
    if (c.digits !== null && !FUND_CODES.includes(c.code)) out.set(c.code, c.digits);
  return out;
}

/** Every ISO 4217 code the package knows, current or withdrawn (a crypto code must be none of them). */
const ISO_CODES: ReadonlySet<string> = new Set(isoCurrencies({ includeDeprecated: true }).map((c) => c.code));

/**
 * The problems of a crypto precision setting, empty when it is usable: each code must match
 * CRYPTO_CODE and not be an ISO 4217 code, each precision an integer 0…MAX_CRYPTO_PRECISION.
 */
export function cryptoProblems(crypto: Readonly<Record<string, number>>): string[] {
  const problems: string[] = [];
  for (const [code, precision] of Object.entries(crypto)) {
    if (!CRYPTO_CODE.test(code))
      problems.push(`${code}: not a crypto code (2 to 10 upper-case letters or digits)`);
    else if (ISO_CODES.has(code)) problems.push(`${code}: an ISO 4217 code, whose exponent ISO gives`);
    if (!Number.isInteger(precision) || precision < 0 || precision > MAX_CRYPTO_PRECISION)
      problems.push(`${code}: precision ${precision} is not an integer 0..${MAX_CRYPTO_PRECISION}`);
  }
  return problems;
}

/**
 * The table of ISO 4217 currencies (minor unit defined, no funds) plus `crypto` (code → precision).
 * @throws MoneyError CURRENCY_CONFIG_INVALID naming every bad entry of `crypto` (see cryptoProblems).
 */
export function currencyTable(crypto: Readonly<Record<string, number>> = DEFAULT_CRYPTO): Currencies {
  const problems = cryptoProblems(crypto);
  if (problems.length > 0) throw new MoneyError('CURRENCY_CONFIG_INVALID', problems.join('; '));
  const exponents = isoExponents();
  for (const [code, precision] of Object.entries(crypto)) exponents.set(code, precision);
  const exponentOf = (code: string): number => {
    const e = exponents.get(code);
    if (e === undefined) throw new MoneyError('CURRENCY_UNKNOWN', `${code} is not a supported currency`);
    return e;
  };
  return Object.freeze({
    codes: Object.freeze([...exponents.keys()].sort()),
    isCurrency: (code: string) => exponents.has(code),
    exponentOf,
    formatMinor: (minor: number, code: string) => formatScaled(minor, exponentOf(code)),
    parseAmount: (amount: number | string, code: string) => {
      const e = exponents.get(code);
      return e === undefined ? undefined : parseScaled(amount, e);
    },
    wireAmount: (minor: number, code: string, format: AmountFormat = 'string') => {
      const e = exponentOf(code);
      if (format === 'number') return numberOfScaled(minor, e);
      if (minor < 0) throw new MoneyError('AMOUNT_INVALID', `a callback amount is never negative (${minor})`);
      return formatScaled(minor, e);
    },
  });
}
