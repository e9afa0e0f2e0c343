/**
 * Scopes of the REST and stream contract (docs/threat-model.md), plus `publish:rounds` (external game
 * servers opening and finishing rounds) and its bindings `publish:rounds:<game>`, one per game: a
 * publisher key may write only the games it is bound to, and only games published externally
 * (GAMES_EXTERNAL). `admin` covers every scope except those bindings (an admin key writes no round);
 * `stream:*` covers `stream:game`.
 * Stream rule: one game (`/ws/:game`, `/sse/:game`, gRPC StreamByGame) needs
 * `stream:game` or `stream:*`; by type or all games needs `stream:*` only.
 */

import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';

/** The binding of a publisher key to one external game. */
export type PublishScope = `publish:rounds:${GameSlug}`;

/** The binding scope of `game`. */
export function publishScopeOf(game: GameSlug): PublishScope {
  return `publish:rounds:${game}`;
}

export const SCOPES = [
  'read:rounds',
  'read:games',
  'stream:*',
  'stream:game',
  'admin',
  'publish:rounds',
  ...GAME_SLUGS.map(publishScopeOf),
] as const;
export type Scope = (typeof SCOPES)[number];

/** The games a key holding `scopes` may publish (its `publish:rounds:<game>` bindings; admin adds none). */
export function publishGamesOf(scopes: readonly string[]): GameSlug[] {
  return GAME_SLUGS.filter((g) => scopes.includes(publishScopeOf(g)));
}

/** Descriptions served by GET /api/auth/scopes. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'read:rounds': 'read round data: /api/latest/*, /api/history/*',
  'read:games': 'read the game list: /api/games',
  'stream:*': 'stream all protocols: /ws/*, /sse/*, WebTransport, gRPC streams (one game, a type, or all)',
  'stream:game': 'stream one game: /ws/:game, /sse/:game, gRPC StreamByGame',
  admin: 'full administration: /api/auth/keys and below; covers every other scope',
  'publish:rounds': 'use the publisher API of external game servers: POST /api/rounds/open, POST /api/rounds',
  ...(Object.fromEntries(
    GAME_SLUGS.map((g) => [
      publishScopeOf(g),
      `open and finish rounds of ${g} when it is published externally (implies publish:rounds; not covered by admin)`,
    ]),
  ) as Record<PublishScope, string>),
};

/** Whether `s` names a known scope. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** Whether a holder of `scopes` may use something needing `needed`. */
export function hasScope(principal: { readonly scopes: readonly string[] }, needed: Scope): boolean {
  const s = principal.scopes;
  if (s.includes(needed)) return true;
  if (s.includes('admin')) return !needed.startsWith('publish:rounds:');
  return needed === 'stream:game' && s.includes('stream:*');
}

/** The scope a stream subscription needs: one game → `stream:game`; a type or all games → `stream:*`. */
export function streamScope(selection: 'game' | 'type' | 'all'): Scope {
  return selection === 'game' ? 'stream:game' : 'stream:*';
}
