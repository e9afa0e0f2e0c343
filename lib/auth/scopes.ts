/**
 * Scopes of seed 000 "Scopes", plus `publish:rounds` (issue 4 item 6: external game servers
 * appending rounds). `admin` covers every scope; `stream:*` covers `stream:game`.
 * Stream rule (issue 4 context): one game (`/ws/:game`, `/sse/:game`, gRPC StreamByGame) needs
 * `stream:game` or `stream:*`; by type or all games needs `stream:*` only.
 */

export const SCOPES = [
  'read:rounds',
  'read:games',
  'stream:*',
  'stream:game',
  'admin',
  'publish:rounds',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Descriptions served by GET /api/auth/scopes. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'read:rounds': 'read round data: /api/latest/*, /api/history/*',
  'read:games': 'read the game list: /api/games',
  'stream:*': 'stream all protocols: /ws/*, /sse/*, WebTransport, gRPC streams (one game, a type, or all)',
  'stream:game': 'stream one game: /ws/:game, /sse/:game, gRPC StreamByGame',
  admin: 'full administration: /api/auth/keys and below; covers every other scope',
  'publish:rounds': 'append finished rounds from an external game server: POST /api/rounds',
};

/** Whether `s` names a known scope. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** Whether a holder of `scopes` may use something needing `needed`. */
export function hasScope(principal: { readonly scopes: readonly string[] }, needed: Scope): boolean {
  const s = principal.scopes;
  if (s.includes('admin') || s.includes(needed)) return true;
  return needed === 'stream:game' && s.includes('stream:*');
}

/** The scope a stream subscription needs: one game → `stream:game`; a type or all games → `stream:*`. */
export function streamScope(selection: 'game' | 'type' | 'all'): Scope {
  return selection === 'game' ? 'stream:game' : 'stream:*';
}
