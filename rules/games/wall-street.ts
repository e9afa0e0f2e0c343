/**
 * Wall Street: the market goes up or down, 50/50. The first bit of the round HMAC decides
 * (0 = up, 1 = down), so both outcomes have probability exactly 1/2.
 */
import type { RoundResult } from '../rounds/round.ts';

/** Betting window, ms at speed 1. */
export const WALL_STREET_BETTING_MS = 6000;
/** The chart's move after betting closes, ms at speed 1. */
export const WALL_STREET_RESULT_MS = 4000;

type WallStreetResult = Extract<RoundResult, { game: 'wall-street' }>;

/** Wall Street result from the round HMAC. @throws RangeError for an empty input. */
export function wallStreet(hmac: Uint8Array): WallStreetResult {
  const first = hmac[0];
  if (first === undefined) throw new RangeError('empty hmac');
  return { game: 'wall-street', trending: first < 0x80 ? 'up' : 'down' };
}

/** From betting closed to the result, ms before the speed factor (constant: nothing leaks the result). */
export function wallStreetResultMs(_result: WallStreetResult): number {
  return WALL_STREET_RESULT_MS;
}
