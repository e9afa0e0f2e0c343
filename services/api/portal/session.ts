/**
 * Signing in to the portal:
 *
 *   POST   /admin/operators/:id/portal-link {ttl_s?} → 201 {operator_id, url, expires_at} (admin key)
 *   POST   /api/portal/session {link_token} → {operator_id, name, csrf_token, expires_at} + cookie
 *   GET    /api/portal/session → the same (401 without a session)
 *   DELETE /api/portal/session → 204, the session ended and the cookie cleared
 *
 * A link is single use and short lived (60 s to 1 h); only its SHA-256 is stored. The exchange is
 * a credential check like any other: a refused link answers 401 and spends a point of the
 * caller's failed-credential budget (limits.ts), and past the budget it answers 429 before the
 * link is looked at.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import { sha256 } from '../../../lib/auth/secrets.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { requireAdmin } from '../access/guards.ts';
import { parseInput } from '../access/input.ts';
import { AuthError, NotFoundError } from '../errors.ts';
import {
  checkBudget,
  newLinkToken,
  newSessionSecret,
  requirePortal,
  SESSION_COOKIE,
  sessionHashOf,
} from './guard.ts';
import { emptyBody, portalLinkBody, SESSION_TTL_S, sessionBody } from './input.ts';
import { portalSchemas } from './schemas.ts';
import { endSession, insertLink, type PortalSession, spendLink } from './sessions-store.ts';

/** A session as the routes answer it. */
const sessionJson = (s: PortalSession) => ({
  operator_id: s.operator_id,
  name: s.name,
  csrf_token: s.csrf_token,
  expires_at: s.expires_at.toISOString(),
});

export interface SessionDeps {
  readonly sql: Sql;
  readonly table: KeyLookup;
  readonly budget: Budget;
  /** The origin of the pages (PUBLIC_BASE_URL): the link's start; https makes the cookie Secure. */
  readonly publicBaseUrl: string;
  readonly now: () => number;
}

/** The cookie attributes of the session (docs/decisions/console/0002-portal-sessions.md). */
function cookieOptions(publicBaseUrl: string) {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: publicBaseUrl.startsWith('https:'),
  } as const;
}

/** Registers the admin link route (on a problem-JSON context: an /admin route). */
export function portalLinkRoute(app: FastifyInstance, deps: SessionDeps): void {
  const { sql, table, now } = deps;
  app.post<{ Params: { id: string } }>(
    '/admin/operators/:id/portal-link',
    { schema: portalSchemas.link },
    async (req, reply) => {
      requireAdmin(table, req, now());
      // The body is required, as /openapi.json says (send {} for the default lifetime).
      const b = parseInput(portalLinkBody, req.body, 'body');
      const token = newLinkToken();
      const expires = await insertLink(sql, sha256(token), req.params.id, b.ttl_s);
      if (!expires) throw new NotFoundError('OPERATOR_NOT_FOUND', `no operator ${req.params.id}`);
      req.log.info({ operator_id: req.params.id, ttl_s: b.ttl_s }, 'portal link minted');
      return reply.code(201).send({
        operator_id: req.params.id,
        url: `${deps.publicBaseUrl}/console/#portal-link=${token}`,
        expires_at: expires.toISOString(),
      });
    },
  );
}

/** Registers the three session routes of /api/portal/session. */
export function portalSessionRoutes(app: FastifyInstance, deps: SessionDeps): void {
  const { sql, budget } = deps;
  const cookie = cookieOptions(deps.publicBaseUrl);
  const guard = { sql, budget };

  app.post('/api/portal/session', { schema: portalSchemas.signIn }, async (req, reply: FastifyReply) => {
    await checkBudget(budget, req, reply);
    const b = parseInput(sessionBody, req.body, 'body');
    const id = newSessionSecret();
    const s = await spendLink(sql, sha256(b.link_token), {
      hash: sha256(id),
      csrfToken: newSessionSecret(),
      ttlS: SESSION_TTL_S,
    });
    if (!s) throw new AuthError(401, 'unknown', 'link_token: unknown, already used or expired');
    req.log.info({ operator_id: s.operator_id }, 'portal session opened');
    reply.setCookie(SESSION_COOKIE, id, { ...cookie, maxAge: SESSION_TTL_S });
    return sessionJson(s);
  });

  app.get('/api/portal/session', { schema: portalSchemas.session }, async (req, reply) =>
    sessionJson(await requirePortal(guard, req, reply)),
  );

  app.delete('/api/portal/session', { schema: portalSchemas.signOut }, async (req, reply) => {
    await requirePortal(guard, req, reply);
    parseInput(emptyBody, req.body ?? {}, 'body');
    const hash = sessionHashOf(req);
    if (hash) await endSession(sql, hash);
    reply.clearCookie(SESSION_COOKIE, cookie);
    return reply.code(204).send();
  });
}
