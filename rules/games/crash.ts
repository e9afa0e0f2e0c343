/**
 * Crash: a multiplier that rises until it "busts" at the crash point. House edge 1%, the
 * bustabit formula: with X = uniform52 / 2^52, point = floor(99 / (1 - X)) / 100, at least 1.00.
 * Then P(point >= x) = 0.99 / x for x > 1, so a player cashing out at any target x gets back
 * 0.99 of the stake on average. Computed in integer cents: floor(99 * 2^52 / (2^52 - n)).
 */
import type { RoundResult } from '../rounds/round.ts';
import { TWO_POW_52, uniform52 } from './random.ts';

/** Fraction of every bet the house keeps on average. */
export const CRASH_HOUSE_EDGE = 0.01;
/**
 * Betting window, ms at speed 1: it opens as the previous flight busts, so it also shows the last
 * result (crash games typically take bets for 5 to 10 s between flights; docs/decisions/rounds-and-fairness/0003-round-lifecycle.md).
 */
export const CRASH_BETTING_MS = 7000;
/** Growth rate of the multiplier per ms of flight: m(t) = e^(0.00006 t) (docs/architecture.md "Round lifecycle"). */
export const CRASH_GROWTH_PER_MS = 0.00006;

const RANGE = BigInt(TWO_POW_52);

/** Crash point in cents (>= 100) from the round HMAC. */
export function crashCents(hmac: Uint8Array): bigint {
  const n = BigInt(uniform52(hmac));
  const cents = (99n * RANGE) / (RANGE - n);
  return cents < 100n ? 100n : cents;
}

/** Crash result from the round HMAC; `point` is a decimal string with two decimals, e.g. "2.31". */
export function crash(hmac: Uint8Array): Extract<RoundResult, { game: 'crash' }> {
  const cents = crashCents(hmac);
  return { game: 'crash', point: `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}` };
}

/** Crash point in cents of a decimal-string point ("2.31" → 231). */
export function pointCents(point: string): number {
  const [whole = '0', frac = ''] = point.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
}

/**
 * Length of the flight in ms of flight time (speed 1): the first moment the multiplier reaches
 * the point, ceil(ln(point) / 0.00006). Not capped: a 1,000,000x round flies for ~3.8 min, as in the
 * games of the kind, so the multiplier a player sees always reaches the point.
 */
export function crashFlightMs(result: Extract<RoundResult, { game: 'crash' }>): number {
  return Math.ceil(Math.log(pointCents(result.point) / 100) / CRASH_GROWTH_PER_MS);
}

/**
 * The flight's multiplier after `elapsedMs` of flight time, in cents, floored: floor(100 e^(0.00006 t)).
 * It stays below the point's cents for every t before crashFlightMs (so a cash-out decided before
 * the bust pays less than the point). @throws RangeError for a negative or non-finite time.
 */
export function multiplierCentsAt(elapsedMs: number): number {
  if (!Number.isFinite(elapsedMs) || elapsedMs < 0) throw new RangeError(`no flight time ${elapsedMs}`);
  return Math.floor(100 * Math.exp(CRASH_GROWTH_PER_MS * elapsedMs) + 1e-9);
}

/** Cents as a decimal string with two decimals (231 → "2.31"). */
export function centsToMultiplier(cents: number): string {
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}
