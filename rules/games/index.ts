/**
 * The game rules by slug: how a round HMAC becomes a result, and the phases of a round
 * (docs/architecture.md "Round lifecycle"): a betting window of fixed length, then the result phase from
 * BettingClosed to RoundFinished (a crash flight until the point; a fixed draw for the others).
 * Lengths are ms at speed 1; the engine divides them by ROUND_SPEED.
 */

import type { RoundResult } from '../rounds/round.ts';
import type { GameSlug } from './catalog.ts';
import { CRASH_BETTING_MS, crash, crashFlightMs } from './crash.ts';
import { DOUBLE_BETTING_MS, DOUBLE_SPIN_MS, double, doubleResultMs } from './double.ts';
import { SLOT_BETTING_MS, SLOT_SPIN_MS, slot, slotResultMs } from './slot.ts';
import {
  WALL_STREET_BETTING_MS,
  WALL_STREET_RESULT_MS,
  wallStreet,
  wallStreetResultMs,
} from './wall-street.ts';

export interface GameRules<R extends RoundResult = RoundResult> {
  /** Pure: 32-byte round HMAC → result. */
  readonly compute: (hmac: Uint8Array) => R;
  /** Default betting window, ms at speed 1 (the same whatever the result). */
  readonly bettingMs: number;
  /** Pure: result → ms from BettingClosed to RoundFinished at speed 1. */
  readonly resultMs: (result: R) => number;
  /**
   * The result phase's length when it is the same for every result (ms at speed 1), so the next
   * round's opening can be announced; null when it depends on the result (a crash flight), since
   * announcing it would reveal the point.
   */
  readonly fixedResultMs: number | null;
}

type RulesBySlug = { readonly [S in GameSlug]: GameRules<Extract<RoundResult, { game: S }>> };

export const GAME_RULES: RulesBySlug = {
  crash: { compute: crash, bettingMs: CRASH_BETTING_MS, resultMs: crashFlightMs, fixedResultMs: null },
  double: {
    compute: double,
    bettingMs: DOUBLE_BETTING_MS,
    resultMs: doubleResultMs,
    fixedResultMs: DOUBLE_SPIN_MS,
  },
  slot: { compute: slot, bettingMs: SLOT_BETTING_MS, resultMs: slotResultMs, fixedResultMs: SLOT_SPIN_MS },
  'wall-street': {
    compute: wallStreet,
    bettingMs: WALL_STREET_BETTING_MS,
    resultMs: wallStreetResultMs,
    fixedResultMs: WALL_STREET_RESULT_MS,
  },
};

/** Rules of `slug` with the result type widened, for code that handles every game alike. */
export function rulesOf(slug: GameSlug): GameRules {
  return GAME_RULES[slug] as unknown as GameRules;
}
