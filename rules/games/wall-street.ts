/**
 * Wall Street: the market goes up or down, 50/50. The first bit of the round HMAC decides
 * (0 = up, 1 = down), so both outcomes have probability exactly 1/2.
 */
import type { RoundResult } from '../rounds/round.ts';

/** Betting plus the chart animation, ms. */
export const WALL_STREET_DURATION_MS = 10_000;

type WallStreetResult = Extract<RoundResult, { game: 'wall-street' }>;

/** Wall Street result from the round HMAC. @throws RangeError for an empty input. */
export function wallStreet(hmac: Uint8Array): WallStreetResult {
  const first = hmac[0];
  if (first === undefined) throw new RangeError('empty hmac');
  return { game: 'wall-street', trending: first < 0x80 ? 'up' : 'down' };
}

/** Round length in ms before the speed factor (constant). */
export function wallStreetDurationMs(_result: WallStreetResult): number {
  return WALL_STREET_DURATION_MS;
}
