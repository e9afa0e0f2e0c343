/**
 * Money at the session API's edge: which currencies a session may use, amounts
 * read in the precision of their currency, and amounts written back. The zod rules of input.ts
 * check an amount's shape (a finite number, bounds); its digits after the point depend on the
 * currency, whose table comes from config (ISO 4217 + CRYPTO_CURRENCIES), so they are checked here.
 *
 * Response amounts of the session API stay JSON numbers in major units (their published shape),
 * now in the currency's precision: 1250 minor JPY → 1250, USD → 12.5, BTC 1 → 1e-8.
 */
import type { Currencies } from '../../../rules/money/currencies.ts';
import { DEMO_START_MAJOR } from '../../../rules/money/money.ts';
import { InvalidInputError } from '../errors.ts';

/**
 * `code` when `currencies` has it.
 * @throws InvalidInputError INVALID_INPUT `<field>: …` naming the rule.
 */
export function currencyOf(currencies: Currencies, code: string, field = 'currency'): string {
  if (!currencies.isCurrency(code))
    throw new InvalidInputError(
      'INVALID_INPUT',
      `${field}: must be an ISO 4217 currency with a minor unit or a configured crypto currency (${code})`,
    );
  return code;
}

/** Float noise tolerated around a whole minor unit (a generated 57 × 0.01 is 0.5700000000000001). */
const NOISE = 1e-6;

/**
 * A major-unit `amount` of currency `code` (already checked by currencyOf) in minor units: exactly
 * its shortest decimal form, or, for a number within NOISE of a whole minor unit (binary float
 * arithmetic of the client), that unit.
 * @throws InvalidInputError INVALID_INPUT `<field>: must have at most N decimals in CODE` when it has
 *   more digits after the point than the currency's exponent, or exceeds 2^53 − 1 minor units.
 */
export function minorOf(currencies: Currencies, amount: number, code: string, field: string): number {
  let minor = currencies.parseAmount(amount, code);
  if (minor === undefined && Number.isFinite(amount) && amount >= 0) {
    const scaled = amount * 10 ** currencies.exponentOf(code);
    const whole = Math.round(scaled);
    if (Math.abs(scaled - whole) < NOISE && Number.isSafeInteger(whole)) minor = whole;
  }
  if (minor === undefined || (minor === 0 && amount > 0)) {
    // A positive amount below half a minor unit (5e-324) is within NOISE of 0: not a whole unit.
    const e = currencies.exponentOf(code);
    throw new InvalidInputError(
      'INVALID_INPUT',
      `${field}: must have at most ${e} decimal${e === 1 ? '' : 's'} in ${code}`,
    );
  }
  return minor;
}

/**
 * `minor` minor units of `code` as the JSON number of a response `amount` (major units).
 * @throws MoneyError when `code` is unknown or no double carries the amount exactly (beyond 10^15 minor units).
 */
export function amountOut(currencies: Currencies, minor: number, code: string): number {
  return currencies.wireAmount(minor, code, 'number') as number;
}

/** The starting balance of a demo session in `code`, minor units (DEMO_START_MAJOR major units). */
export function demoStartMinor(currencies: Currencies, code: string): number {
  return minorOf(currencies, DEMO_START_MAJOR, code, 'balance');
}
