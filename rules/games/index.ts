/**
 * The game rules by slug: how a round HMAC becomes a result, and how long a round with that
 * result lasts (ms, before the ROUND_SPEED factor).
 */

import type { RoundResult } from '../rounds/round.ts';
import type { GameSlug } from './catalog.ts';
import { crash, crashDurationMs } from './crash.ts';
import { double, doubleDurationMs } from './double.ts';
import { slot, slotDurationMs } from './slot.ts';
import { wallStreet, wallStreetDurationMs } from './wall-street.ts';

export interface GameRules<R extends RoundResult = RoundResult> {
  /** Pure: 32-byte round HMAC → result. */
  readonly compute: (hmac: Uint8Array) => R;
  /** Pure: result → round length in ms at speed 1. */
  readonly durationMs: (result: R) => number;
}

type RulesBySlug = { readonly [S in GameSlug]: GameRules<Extract<RoundResult, { game: S }>> };

export const GAME_RULES: RulesBySlug = {
  crash: { compute: crash, durationMs: crashDurationMs },
  double: { compute: double, durationMs: doubleDurationMs },
  slot: { compute: slot, durationMs: slotDurationMs },
  'wall-street': { compute: wallStreet, durationMs: wallStreetDurationMs },
};

/** Rules of `slug` with the result type widened, for code that handles every game alike. */
export function rulesOf(slug: GameSlug): GameRules {
  return GAME_RULES[slug] as unknown as GameRules;
}
