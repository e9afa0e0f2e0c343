/**
 * Request parsing of the DataStream RPCs. Pure; throws `RpcError` with the status a client sees:
 * INVALID_ARGUMENT for malformed input, NOT_FOUND for a well-formed name of no game or type,
 * always before any stream starts (unknown game or type is NOT_FOUND).
 * Slug and type rules are those of every other transport (../../selection.ts).
 */

import type { Selection } from '../../../../lib/stream/hub.ts';
import {
  parseGameSelection,
  parseTypeSelection,
  type SelectionResult,
} from '../../../../lib/stream/selection.ts';
import type { GameInfo, GameType } from '../../../../rules/games/catalog.ts';
import { gameBySlug, gamesOfType } from '../../../../rules/games/catalog.ts';
import { invalidArgument, notFound } from './errors.ts';

/** History `limit` bounds and default (docs/contract.md "Limits"); the same rule as REST. */
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 1000;
export const LIMIT_DEFAULT = 500;
export const LIMIT_RULE = `limit must be an integer from ${LIMIT_MIN} to ${LIMIT_MAX}`;

function unwrap(r: SelectionResult): Selection {
  if (r.ok) return r.selection;
  throw r.status === 404 ? notFound(r.error) : invalidArgument(r.error);
}

/**
 * A game selection from a request's `game_slug` (absent counts as empty).
 * @throws RpcError INVALID_ARGUMENT "Invalid game slug"; NOT_FOUND "Game not found".
 */
export function gameSelection(slug: string | undefined): Selection & { kind: 'game' } {
  return unwrap(parseGameSelection(slug ?? '')) as Selection & { kind: 'game' };
}

/**
 * A type selection from a request's `game_type`.
 * @throws RpcError INVALID_ARGUMENT "Invalid game type"; NOT_FOUND "Game type not found".
 */
export function typeSelection(type: string | undefined): Selection & { kind: 'type' } {
  return unwrap(parseTypeSelection(type ?? '')) as Selection & { kind: 'type' };
}

/**
 * GetHistory's `limit`: absent → 500, else an integer from 1 to 1000. proto3 `optional` tells an
 * absent limit from an explicit 0, so 0 is refused rather than silently read as the default.
 * @throws RpcError INVALID_ARGUMENT naming the rule.
 */
export function parseLimit(limit: number | undefined): number {
  if (limit === undefined) return LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < LIMIT_MIN || limit > LIMIT_MAX) throw invalidArgument(LIMIT_RULE);
  return limit;
}

/** What GetHistory reads: one game, or the games of one type reported as that type. */
export type HistoryTarget =
  | { readonly kind: 'game'; readonly game: GameInfo }
  | { readonly kind: 'type'; readonly type: GameType; readonly games: readonly GameInfo[] };

/**
 * GetHistory's selection: exactly one of `game_slug` and `game_type` (a oneof in the .proto, so
 * a client can set at most one; none set is refused).
 * @throws RpcError INVALID_ARGUMENT when neither is set or the value is malformed; NOT_FOUND for an unknown one.
 */
export function historyTarget(req: { game_slug?: string; game_type?: string }): HistoryTarget {
  if (req.game_slug !== undefined) {
    const sel = gameSelection(req.game_slug);
    return { kind: 'game', game: gameBySlug(sel.slug) as GameInfo };
  }
  if (req.game_type !== undefined) {
    const sel = typeSelection(req.game_type);
    return { kind: 'type', type: sel.type, games: gamesOfType(sel.type) };
  }
  throw invalidArgument('game_slug or game_type is required');
}
