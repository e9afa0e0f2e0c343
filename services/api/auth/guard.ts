/**
 * REST credential checks (docs/contract.md "Authentication" 2, 6, 10, 11; scope table of "Scopes"):
 * the credential comes from `X-API-Key` or `Authorization: Bearer`; which scope a route needs is
 * decided here from its method and route pattern. With AUTH_REQUIRE_API off, anonymous requests
 * pass, but a credential that is present is still checked (bad → 401, lacking scope → 403).
 * Admin routes, POST /api/auth/token and POST /api/rounds always need a credential.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { credentialFromHeaders } from '../../../lib/auth/credentials.ts';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import type { Scope } from '../../../lib/auth/scopes.ts';
import { authenticate, type Principal } from '../../../lib/auth/verifier.ts';
import { AuthError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, when a valid credential was sent. */
    principal?: Principal;
  }
}

/** What a route needs: `null` = public; `scope` undefined = any valid credential. */
export interface RouteRule {
  readonly scope?: Scope;
  /** Needs a credential even when AUTH_REQUIRE_API is off. */
  readonly always: boolean;
}

const PUBLIC: RouteRule | null = null;

/**
 * The rule of a route (`url` is the route pattern, e.g. `/api/latest/:game`).
 * @returns null for public routes and for anything outside /api (static pages, ops, 404s).
 */
export function ruleFor(method: string, url: string | undefined): RouteRule | null {
  if (url === undefined || !url.startsWith('/api/')) return PUBLIC;
  if (url === '/api/auth/scopes' || url === '/api/auth/browser-key') return PUBLIC;
  if (url === '/api/auth/token') return { always: true };
  if (url.startsWith('/api/auth/keys')) return { scope: 'admin', always: true };
  if ((url === '/api/rounds' || url === '/api/rounds/open') && method === 'POST')
    return { scope: 'publish:rounds', always: true };
  if (url === '/api/games') return { scope: 'read:games', always: false };
  if (url.startsWith('/api/latest/') || url.startsWith('/api/history/'))
    return { scope: 'read:rounds', always: false };
  return PUBLIC;
}

/** Per-key last use, kept in memory and drained by the batch writer (never a write per request). */
export class LastUsed {
  private pending = new Map<string, number>();
  private readonly seen = new Map<string, number>();

  touch(keyId: string, nowMs: number): void {
    this.pending.set(keyId, nowMs);
    this.seen.set(keyId, nowMs);
  }

  /** Last use (Unix ms) of `keyId` seen by this process, or null. */
  get(keyId: string): number | null {
    return this.seen.get(keyId) ?? null;
  }

  /** Puts a use back for the next drain unless a newer one arrived meanwhile. */
  requeue(keyId: string, atMs: number): void {
    if ((this.pending.get(keyId) ?? 0) < atMs) this.pending.set(keyId, atMs);
  }

  /** Takes the uses recorded since the previous drain. */
  drain(): Map<string, number> {
    const out = this.pending;
    this.pending = new Map();
    return out;
  }
}

/**
 * An onRequest hook enforcing `ruleFor`; sets `req.principal` on success.
 * @throws AuthError (answered 401/403 by the API's error handler).
 */
export function authHook(deps: {
  table: KeyLookup;
  requireApi: boolean;
  lastUsed: LastUsed;
  now?: () => number;
}): (req: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const now = deps.now ?? Date.now;
  return async (req) => {
    const rule = ruleFor(req.method, req.routeOptions.url);
    if (!rule) return;
    const credential = credentialFromHeaders(req.headers);
    if (credential === undefined && !rule.always && !deps.requireApi) return;
    const t = now();
    const r = authenticate(deps.table, {
      credential,
      origin: req.headers.origin,
      now: t,
      ...(rule.scope ? { scope: rule.scope } : {}),
    });
    if (!r.ok) throw new AuthError(r.status, r.reason, r.message);
    req.principal = r.principal;
    deps.lastUsed.touch(r.principal.keyId, t);
  };
}
