/**
 * Minor units ⇄ decimal text for a given exponent (the number of digits after the point), by
 * string and BigInt arithmetic only: no division or multiplication of floats, so every integer
 * from 0 to 2^53 − 1 minor units round-trips exactly whatever the exponent. Pure.
 *
 * currencies.ts puts a currency's exponent (ISO 4217 or a configured crypto precision) in front
 * of these; nothing else should scale money by powers of ten.
 */
import { MoneyError } from '../errors.ts';

/** Largest amount in minor units the platform carries: 2^53 − 1 (a JSON-safe integer). */
export const MAX_MINOR = Number.MAX_SAFE_INTEGER;

/** Longest decimal text looked at; anything longer is beyond MAX_MINOR at every exponent. */
const MAX_TEXT = 40;
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;
/** What `String(n)` writes for a finite non-negative double in exponent form (1e-7, 1.5e+21). */
const EXPONENT_FORM = /^(\d)(?:\.(\d+))?e([+-]\d+)$/;

/**
 * `minor` minor units as a decimal string with exactly `exponent` digits after the point
 * (none, and no point, at exponent 0): (1250, 2) → "12.50", (1250, 0) → "1250",
 * (1, 8) → "0.00000001", (-5, 2) → "-0.05".
 * @throws MoneyError AMOUNT_INVALID when `minor` is not a safe integer.
 */
export function formatScaled(minor: number, exponent: number): string {
  if (!Number.isSafeInteger(minor))
    throw new MoneyError('AMOUNT_INVALID', `${minor} is not a whole number of minor units`);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor));
  if (exponent === 0) return `${sign}${digits}`;
  const padded = digits.padStart(exponent + 1, '0');
  return `${sign}${padded.slice(0, -exponent)}.${padded.slice(-exponent)}`;
}

/** The plain decimal text of a finite non-negative double (`String` may write 1e-7 or 1e+21). */
function plainDecimal(n: number): string {
  const s = String(n);
  const m = EXPONENT_FORM.exec(s);
  if (!m) return s;
  const digits = `${m[1]}${m[2] ?? ''}`;
  const point = 1 + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits.padEnd(point, '0');
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A non-negative major-unit amount, as a JSON number or a decimal string, in minor units of
 * `exponent`: (12.5, 2) → 1250, ("12.50", 2) → 1250, ("0.00000001", 8) → 1, ("1250", 0) → 1250.
 * A number is read as the shortest decimal that denotes it (what `JSON.stringify` writes), so
 * 0.1 + 0.2 (0.30000000000000004) is refused at exponent 2.
 * @returns undefined (refused) for a negative, non-finite or non-decimal value (strings: digits
 *   with an optional point and digits, no sign, blanks or exponent), for more digits after the
 *   point than `exponent` (even zeros: "12.0" at exponent 0), and beyond MAX_MINOR minor units.
 */
export function parseScaled(amount: number | string, exponent: number): number | undefined {
  let text: string;
  if (typeof amount === 'number') {
    if (!Number.isFinite(amount) || amount < 0) return undefined;
    text = plainDecimal(amount);
  } else {
    text = amount;
  }
  if (text.length > MAX_TEXT) return undefined;
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const fraction = m[2] ?? '';
  if (fraction.length > exponent) return undefined;
  const minor = BigInt(`${m[1]}${fraction.padEnd(exponent, '0')}`);
  return minor > BigInt(MAX_MINOR) ? undefined : Number(minor);
}

/**
 * `minor` minor units as a JSON number in major units, only when that number reads back as
 * exactly `minor` (every amount below 10^15 minor units does): (1250, 2) → 12.5.
 * @throws MoneyError AMOUNT_INVALID for a negative or non-safe-integer `minor`; AMOUNT_INEXACT when
 *   no double denotes the amount exactly (such an amount must travel as a decimal string).
 */
export function numberOfScaled(minor: number, exponent: number): number {
  if (!Number.isSafeInteger(minor) || minor < 0)
    throw new MoneyError('AMOUNT_INVALID', `${minor} is not a non-negative whole number of minor units`);
  const n = Number(formatScaled(minor, exponent));
  if (parseScaled(n, exponent) !== minor)
    throw new MoneyError(
      'AMOUNT_INEXACT',
      `${formatScaled(minor, exponent)} has no exact JSON number; send it as a decimal string`,
    );
  return n;
}
