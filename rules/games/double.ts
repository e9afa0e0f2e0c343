/**
 * Double: a 15-slot wheel, 0 white (pays 14x), 1..7 red and 8..14 black (pay 2x).
 * number = floor(uniform52 * 15 / 2^52), exact integer arithmetic.
 */
import type { RoundResult } from '../rounds/round.ts';
import { pick52 } from './random.ts';

export const DOUBLE_SLOTS = 15;
/** Betting window, ms at speed 1 (roulette-style double games take bets for 10 to 15 s). */
export const DOUBLE_BETTING_MS = 10_000;
/** The wheel's spin after betting closes, ms at speed 1. */
export const DOUBLE_SPIN_MS = 5000;

type DoubleResult = Extract<RoundResult, { game: 'double' }>;

/** Colour of a wheel slot: 0 white, 1..7 red, 8..14 black. @throws RangeError outside 0..14. */
export function colorOf(n: number): DoubleResult['color'] {
  if (!Number.isInteger(n) || n < 0 || n >= DOUBLE_SLOTS) throw new RangeError(`no wheel slot ${n}`);
  if (n === 0) return 'white';
  return n <= 7 ? 'red' : 'black';
}

/** Double result from the round HMAC. */
export function double(hmac: Uint8Array): DoubleResult {
  const number = pick52(hmac, DOUBLE_SLOTS);
  return { game: 'double', color: colorOf(number), number };
}

/** From betting closed to the result, ms before the speed factor (constant: nothing leaks the result). */
export function doubleResultMs(_result: DoubleResult): number {
  return DOUBLE_SPIN_MS;
}
