/**
 * The fixed catalogue of games and game types (docs/contract.md "Games" and "Game types").
 *
 * A game has one primary type (the seed's game table) but may belong to more types: the seed's
 * type table puts slot in both `slots` and `multiplier`. `gamesOfType('multiplier')` therefore
 * returns crash and slot.
 */

export const GAME_TYPES = ['multiplier', 'color', 'slots', 'trending'] as const;
export type GameType = (typeof GAME_TYPES)[number];

export const GAME_SLUGS = ['crash', 'double', 'slot', 'wall-street'] as const;
export type GameSlug = (typeof GAME_SLUGS)[number];

export interface GameInfo {
  /** Database id (the seed's `game_id`). */
  readonly id: number;
  readonly slug: GameSlug;
  readonly name: string;
  /** Primary type, as in the seed's game table. */
  readonly type: GameType;
  /** Every type whose subscription or history includes this game (seed's type table). */
  readonly memberOf: readonly GameType[];
}

export const GAMES: readonly GameInfo[] = Object.freeze([
  { id: 1, slug: 'crash', name: 'Crash', type: 'multiplier', memberOf: ['multiplier'] },
  { id: 2, slug: 'double', name: 'Double', type: 'color', memberOf: ['color'] },
  { id: 3, slug: 'slot', name: 'Slot Machine', type: 'slots', memberOf: ['slots', 'multiplier'] },
  { id: 4, slug: 'wall-street', name: 'Wall Street', type: 'trending', memberOf: ['trending'] },
]);

const bySlug = new Map<string, GameInfo>(GAMES.map((g) => [g.slug, g]));
const byId = new Map<number, GameInfo>(GAMES.map((g) => [g.id, g]));

/** Slug syntax accepted on every path parameter: `[a-z0-9-]`, 1 to 64 characters. */
export const SLUG_PATTERN = /^[a-z0-9-]{1,64}$/;

/** True when `s` is syntactically a slug (it may still name no game). */
export function isWellFormedSlug(s: string): boolean {
  return SLUG_PATTERN.test(s);
}

/** The game with this slug, or undefined. */
export function gameBySlug(slug: string): GameInfo | undefined {
  return bySlug.get(slug);
}

/** The game with this database id, or undefined. */
export function gameById(id: number): GameInfo | undefined {
  return byId.get(id);
}

/** True when `t` is one of the four game types. */
export function isGameType(t: string): t is GameType {
  return (GAME_TYPES as readonly string[]).includes(t);
}

/** Games delivered by a subscription or history query by type (seed: multiplier = crash and slot). */
export function gamesOfType(type: GameType): GameInfo[] {
  return GAMES.filter((g) => g.memberOf.includes(type));
}

/**
 * Who writes a game's rounds. Every game has exactly one source (docs/threat-model.md "One writer
 * per game"): the round engine, or one registered external game server whose publisher key is bound
 * to the game (scope `publish:rounds:<slug>`).
 */
export type GameSource = 'engine' | 'external';

/** The source of `slug`, given the games declared external (setting GAMES_EXTERNAL). */
export function gameSource(slug: GameSlug, external: readonly GameSlug[]): GameSource {
  return external.includes(slug) ? 'external' : 'engine';
}
