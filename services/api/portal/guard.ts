/**
 * Who is calling the portal: the operator of the `portal_session` cookie (an HttpOnly,
 * SameSite=Strict cookie set by POST /api/portal/session), and, on every state-changing request,
 * the proof that the page of that session sent it: header `x-csrf-token` equal to the session's
 * CSRF token (compared in constant time). SameSite=Strict already keeps other sites' requests
 * from carrying the cookie; the header is the second lock (docs/decisions/console/0002-portal-sessions.md).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import { sha256 } from '../../../lib/auth/secrets.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { AuthError, RateLimitedError } from '../errors.ts';
import { clientKey } from '../limits.ts';
import { type PortalSession, sessionOf } from './sessions-store.ts';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'portal_session';
/** Header carrying the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';
/** Methods that change nothing and need no CSRF token. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Longest cookie value read (a minted one is 43 characters). */
const COOKIE_MAX = 200;

/** A portal-link token: `plk_` + 43 base64url characters (256 random bits). */
export const newLinkToken = (): string => `plk_${randomBytes(32).toString('base64url')}`;
/** A session id (the cookie's value) or a CSRF token: 43 base64url characters (256 random bits). */
export const newSessionSecret = (): string => randomBytes(32).toString('base64url');

/** Whether `given` equals `expected`, in time independent of where they differ (digests of equal length). */
export function sameSecret(given: string, expected: string): boolean {
  const d = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(d(given), d(expected));
}

/**
 * Refuses at once a caller whose IP has spent its failed-credential budget (limits.ts: every 401
 * spends a point), as the API does for requests carrying a key.
 * @throws RateLimitedError (429, Retry-After set on `reply`).
 */
export async function checkBudget(budget: Budget, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const s = await budget.exhausted(clientKey(req));
  if (!s.exhausted) return;
  reply.header('retry-after', String(s.retryAfterS));
  throw new RateLimitedError(s.retryAfterS);
}

/** The SHA-256 of the request's session cookie, or undefined when it has none. */
export function sessionHashOf(req: FastifyRequest): string | undefined {
  const v = req.cookies[SESSION_COOKIE];
  return v === undefined || v === '' || v.length > COOKIE_MAX ? undefined : sha256(v);
}

/**
 * The open session of the request's cookie; on a state-changing method, its CSRF header too.
 * @throws AuthError 401 (no cookie, or no open session has it: ended, expired, its operator
 *   disabled), 403 reason `csrf_failed` (header missing or not the session's token);
 *   RateLimitedError when the caller's failed-credential budget is spent.
 */
export async function requirePortal(
  deps: { sql: Sql; budget: Budget },
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<PortalSession> {
  const raw = req.cookies[SESSION_COOKIE];
  if (raw === undefined || raw === '')
    throw new AuthError(401, 'missing', 'a portal session is required (sign in with a portal link)');
  await checkBudget(deps.budget, req, reply);
  const hash = sessionHashOf(req);
  const s = hash === undefined ? undefined : await sessionOf(deps.sql, hash);
  if (!s) throw new AuthError(401, 'unknown', 'no open portal session has this cookie (ended or expired)');
  if (!SAFE.has(req.method)) {
    const given = req.headers[CSRF_HEADER];
    if (typeof given !== 'string' || !sameSecret(given, s.csrf_token))
      throw new AuthError(403, 'csrf_failed', `${CSRF_HEADER}: missing or not this session's CSRF token`);
  }
  return s;
}
