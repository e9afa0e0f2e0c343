/**
 * Parsing a stream path parameter into a hub `Selection`, shared by every transport so that each
 * refuses bad input the same way, before any stream starts. Texts and
 * statuses follow docs/contract.md "Errors" and the REST API: a malformed value is 400, a well-formed
 * name of no game or type is 404.
 */
import {
  GAME_SLUGS,
  type GameSlug,
  type GameType,
  gameBySlug,
  gamesOfType,
  isGameType,
  isWellFormedSlug,
} from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';

/** What a subscriber asked for. */
export type Selection =
  | { readonly kind: 'game'; readonly slug: GameSlug }
  | { readonly kind: 'type'; readonly type: GameType }
  | { readonly kind: 'all' };

/** The game type a subscriber of `selection` sees in `game_type`. */
export function reportedType(selection: Selection, round: RoundFinished): GameType {
  return selection.kind === 'type' ? selection.type : round.game_type;
}

const slugLists = new Map<string, readonly GameSlug[]>();

/** Slugs of the games a selection covers, in catalogue order (one shared array per selection). */
export function slugsOf(selection: Selection): readonly GameSlug[] {
  if (selection.kind === 'all') return GAME_SLUGS;
  const key = selection.kind === 'game' ? selection.slug : selection.type;
  let list = slugLists.get(key);
  if (!list) {
    list = Object.freeze(
      selection.kind === 'game' ? [selection.slug] : gamesOfType(selection.type).map((g) => g.slug),
    );
    slugLists.set(key, list);
  }
  return list;
}

export type SelectionResult =
  | { readonly ok: true; readonly selection: Selection }
  | { readonly ok: false; readonly status: 400 | 404; readonly error: string };

/** A game slug (`/…/:game`) as a selection; 400 "Invalid game slug", 404 "Game not found". */
export function parseGameSelection(raw: string): SelectionResult {
  if (!isWellFormedSlug(raw)) return { ok: false, status: 400, error: 'Invalid game slug' };
  const game = gameBySlug(raw);
  if (!game) return { ok: false, status: 404, error: 'Game not found' };
  return { ok: true, selection: { kind: 'game', slug: game.slug } };
}

/** A game type (`/…/type/:type`) as a selection; 400 "Invalid game type", 404 "Game type not found". */
export function parseTypeSelection(raw: string): SelectionResult {
  if (!isWellFormedSlug(raw)) return { ok: false, status: 400, error: 'Invalid game type' };
  if (!isGameType(raw)) return { ok: false, status: 404, error: 'Game type not found' };
  return { ok: true, selection: { kind: 'type', type: raw } };
}

/**
 * A stream path below its prefix: `<game>` or `type/<type>` (e.g. the rest of `/ws/type/color`).
 * Anything else (more segments, an empty segment) is 404 "Not found".
 */
export function parseStreamPath(rest: string): SelectionResult {
  const parts = rest.split('/');
  if (parts.length === 1 && parts[0]) return parseGameSelection(parts[0]);
  if (parts.length === 2 && parts[0] === 'type' && parts[1] !== undefined)
    return parseTypeSelection(parts[1]);
  return { ok: false, status: 404, error: 'Not found' };
}

/** A label for logs: `game:crash`, `type:multiplier`, `all`. */
export function selectionLabel(s: Selection): string {
  return s.kind === 'game' ? `game:${s.slug}` : s.kind === 'type' ? `type:${s.type}` : 'all';
}
