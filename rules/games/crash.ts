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
/** Betting phase before the flight, ms. */
export const CRASH_BETTING_MS = 5000;
/** Pause after the bust, ms. */
export const CRASH_COOLDOWN_MS = 3000;
/** Growth rate of the displayed multiplier per ms: multiplier(t) = e^(0.00006 t). */
export const CRASH_GROWTH_PER_MS = 0.00006;
/** Longest flight shown, ms; points above ~36.6x would otherwise fly for minutes (e^(0.00006*60000)). */
export const CRASH_MAX_FLIGHT_MS = 60_000;

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

/**
 * Round length in ms before the speed factor: betting, the flight until the multiplier reaches
 * the point (capped at CRASH_MAX_FLIGHT_MS), and the cooldown.
 */
export function crashDurationMs(result: Extract<RoundResult, { game: 'crash' }>): number {
  const flight = Math.log(Number(result.point)) / CRASH_GROWTH_PER_MS;
  return CRASH_BETTING_MS + Math.min(Math.round(flight), CRASH_MAX_FLIGHT_MS) + CRASH_COOLDOWN_MS;
}
