/**
 * The parts of the API's contract that hold for every route, applied by one
 * onRoute hook so that every route gets them, those added later included:
 *
 * - Security: who must call, derived from the path as the guards decide it (auth/guard.ts ruleFor,
 *   access/guards.ts): `apiKey` (X-API-Key: a key or token; admin routes need the admin scope),
 *   `operatorBearer` (op_…) on /games and /sessions, `playerBearer` (pt_…) on /play (but /play/open);
 *   optional on the /api reads while AUTH_REQUIRE_API is off.
 * - Error responses every route can give, in the form of its path (RFC 7807 problem JSON,
 *   `application/problem+json`, on the session API; `{error, success:false}` elsewhere): 400 (input
 *   policy, malformed URL), 429 (the failed-credential budget, the /api limit), 503 (Postgres or the
 *   log away; all but /health), 401 and 403 where a credential is accepted, 404 where a path names
 *   something, 413 and 415 where a body is read. A route's own description of a status wins.
 * - 405 with `Allow` for a method a path does not have (instead of 404), before any body is read.
 *
 * The route schemas stay what the server enforces (the same objects validate or describe the
 * handlers' zod rules), and /openapi.json is generated from them by @fastify/swagger.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { isSessionApiPath } from '../../lib/http/error-form.ts';
import { ruleFor } from './auth/guard.ts';
import { errorBodySchema, problemBodySchema } from './errors.ts';

/** The security schemes of /openapi.json (components.securitySchemes). */
export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'An API key (sk_live_…, pk_live_… with its Origin) or a 15 s token (tok_…); Authorization: Bearer works too.',
  },
  operatorBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An operator token op_… (POST /admin/operators).',
  },
  playerBearer: { type: 'http', scheme: 'bearer', description: 'A player token pt_… (POST /play/open).' },
  portalSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'portal_session',
    description:
      'The operator portal session cookie (POST /api/portal/session); writes also need x-csrf-token.',
  },
} as const;

type Security = Record<string, string[]>[];

/** Who must call `method url` (undefined: nobody; `[{}, …]`: optional). */
export function securityOf(method: string, url: string): Security | undefined {
  if (url.startsWith('/api/')) {
    const rule = ruleFor(method, url);
    if (!rule) return undefined;
    return rule.always ? [{ apiKey: [] }] : [{}, { apiKey: [] }];
  }
  if (url.startsWith('/admin/')) return [{ apiKey: [] }];
  if (url === '/games' || url.startsWith('/games/') || url.startsWith('/sessions/'))
    return [{ operatorBearer: [] }];
  if (url.startsWith('/play/') && url !== '/play/open') return [{ playerBearer: [] }];
  return undefined;
}

/** Descriptions of the statuses every route may give (its own description wins). */
const COMMON_TEXT: Readonly<Record<number, string>> = {
  400: 'Invalid input: the field and rule are named (input policy), or a malformed URL.',
  401: 'Missing, malformed, unknown, expired or revoked credential (reason says which).',
  403: 'A valid credential without the scope, or an Origin its public key does not allow.',
  404: 'Nothing under this name.',
  413: 'Body over 1 MiB.',
  415: 'Body not application/json, or in a charset other than UTF-8.',
  429: 'Rate limit or failed-credential budget spent; Retry-After says for how long.',
  503: 'Postgres or the log cannot be reached; nothing was done.',
};

/** A response entry in the form of the path: problem JSON content, or the seed's error body. */
function errorResponse(session: boolean, description: string): Record<string, unknown> {
  return session
    ? {
        description,
        content: { 'application/problem+json': { schema: { $ref: `${problemBodySchema.$id}#` } } },
      }
    : { $ref: `${errorBodySchema.$id}#`, description };
}

/** Whether `entry` (a response schema) is one of the shared error schemas written the short way. */
function errorRef(entry: unknown): string | undefined {
  const ref = (entry as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' ? ref : undefined;
}

/** The statuses `route` can give besides its own: see the file comment. */
function commonStatuses(route: RouteOptions, hasSecurity: boolean): number[] {
  const s = route.schema ?? {};
  const out = [400, 429];
  if (route.url !== '/health') out.push(503);
  if (hasSecurity) out.push(401, 403);
  if (s.params || route.url.includes(':')) out.push(404);
  if (s.body) out.push(413, 415);
  return out;
}

/** Completes `route`'s schema in place (called for every route by the onRoute hook). */
export function completeRoute(route: RouteOptions): void {
  const schema = route.schema as (Record<string, unknown> & { hide?: boolean }) | undefined;
  if (!schema || schema.hide || route.method === 'HEAD' || route.url.includes('*')) return;
  const method = Array.isArray(route.method) ? (route.method[0] as string) : route.method;
  const session = isSessionApiPath(route.url);
  const security = securityOf(method, route.url);
  const response: Record<string, unknown> = { ...((schema.response as Record<string, unknown>) ?? {}) };
  for (const [code, entry] of Object.entries(response)) {
    // The session API's problem refs become problem JSON content (its real Content-Type).
    if (session && Number(code) >= 400 && errorRef(entry) === `${problemBodySchema.$id}#`) {
      response[code] = errorResponse(true, (entry as { description?: string }).description ?? '');
    }
  }
  for (const status of commonStatuses(route, security !== undefined)) {
    if (!(String(status) in response)) response[status] = errorResponse(session, COMMON_TEXT[status] ?? '');
  }
  route.schema = { ...schema, response, ...(security ? { security } : {}) };
}

/** A route pattern as a matcher of concrete paths (`:name` matches one segment). */
function patternOf(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * Registers the hook completing every route, and answers a method a known path does not have
 * with 405 and `Allow` (RFC 9110 §15.5.6) rather than 404, in the form of the path. Register on
 * the root before any route.
 */
export function registerContract(app: FastifyInstance): void {
  const known = new Map<string, { re: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    completeRoute(route);
    if (route.url.includes('*')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const entry = known.get(route.url) ?? { re: patternOf(route.url), methods: new Set<string>() };
    for (const m of methods) entry.methods.add(m);
    known.set(route.url, entry);
  });
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const matched = req.routeOptions.url;
    // A request a static route answered needs nothing here (the common case: no work per request).
    if (!req.is404 && matched !== '/*' && !matched?.includes(':')) return;
    const path = req.url.split('?')[0] ?? '';
    // A path that is a static route of its own belongs to it, even where a parametric route of
    // another method also matches it (GET /admin/wallet/callbacks/redrive is not a tx_id).
    const owner = matched === path ? undefined : known.get(path.replace(/(.)\/$/, '$1'));
    let allowed: Set<string>;
    if (owner && !path.includes(':') && !owner.methods.has(req.method)) allowed = new Set(owner.methods);
    else {
      // Unknown routes, and GETs that only the static pages' wildcard caught.
      if (!req.is404 && req.routeOptions.url !== '/*') return;
      allowed = new Set<string>();
      for (const { re, methods } of known.values())
        if (re.test(path)) for (const m of methods) allowed.add(m);
    }
    if (allowed.size === 0 || allowed.has(req.method)) return;
    allowed.add('OPTIONS');
    const allow = [...allowed].sort().join(', ');
    const text = `Method ${req.method} not allowed; allowed: ${allow}`;
    reply.code(405).header('allow', allow);
    if (isSessionApiPath(req.url)) {
      return reply
        .type('application/problem+json')
        .send({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: text });
    }
    return reply.send({ error: text, success: false });
  });
}
