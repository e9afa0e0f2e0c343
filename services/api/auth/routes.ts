/**
 * The auth endpoints of docs/contract.md "Authentication endpoints". Writes append to `auth-keys` and answer
 * only after the local key table has applied the appended record (read-your-write).
 * Access rules are enforced by guard.ts before these handlers run.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Producer } from 'kafkajs';
import { isKeyId, newKeyId, newSecret, secretHash } from '../../../lib/auth/credentials.ts';
import { appendKeyEvent, type KeyCreated } from '../../../lib/auth/key-events.ts';
import type { KeyRecord, KeyTable } from '../../../lib/auth/key-table.ts';
import { normalizeOrigin } from '../../../lib/auth/origins.ts';
import {
  publishGamesOf,
  publishScopeOf,
  SCOPE_DESCRIPTIONS,
  SCOPES,
  type Scope,
} from '../../../lib/auth/scopes.ts';
import { issueToken, TOKEN_TTL_S } from '../../../lib/auth/tokens.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { type GameSlug, gameSource } from '../../../rules/games/catalog.ts';
import type { ApiConfig } from '../config.ts';
import { AuthError, ConflictError, InvalidInputError, NotFoundError, RateLimitedError } from '../errors.ts';
import { type ApiBudgets, clientKey } from '../limits.ts';
import {
  BROWSER_KEY_RATE_LIMIT,
  BROWSER_KEY_SCOPES,
  checkBrowserKeyInput,
  deriveBrowserKey,
} from './browser-key.ts';
import type { LastUsed } from './guard.ts';
import {
  browserKeySchema,
  createKeySchema,
  deleteKeySchema,
  listKeysSchema,
  revokeKeySchema,
  scopesSchema,
  tokenSchema,
} from './schemas.ts';

export interface AuthRouteDeps {
  readonly config: Pick<ApiConfig, 'kafka' | 'games'>;
  /** The read model (api_keys) for `last_used` written by other API processes. */
  readonly sql: Sql;
  readonly table: KeyTable;
  readonly producer: Producer;
  readonly lastUsed: LastUsed;
  /** Browser-key minting budgets per IP and per bound_domain (limits.ts); none: unlimited (tests). */
  readonly budgets?: Pick<ApiBudgets, 'browserKeysPerIp' | 'browserKeysPerDomain'>;
  readonly now?: () => number;
}

/** Default requests per minute. */
export const DEFAULT_RATE_LIMIT = { private: 1000, public: 100 } as const;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function view(k: KeyRecord, lastUsed: LastUsed, storedLastUsed?: number) {
  const local = lastUsed.get(k.keyId);
  const last = local === null ? (storedLastUsed ?? null) : Math.max(local, storedLastUsed ?? 0);
  return {
    id: k.keyId,
    name: k.name,
    kind: k.kind,
    scopes: k.scopes,
    rate_limit: k.rateLimit,
    allowed_origins: k.allowedOrigins,
    admin: k.admin,
    bound_domain: k.boundDomain,
    publish_games: publishGamesOf(k.scopes),
    created_at: iso(k.createdAtMs),
    revoked_at: iso(k.revokedAtMs),
    last_used: iso(last),
  };
}

interface CreateBody {
  name: string;
  scopes: Scope[];
  rate_limit?: number;
  kind: 'private' | 'public';
  allowed_origins?: string[];
}

/**
 * The scopes a created key holds: `publish:rounds:<game>` bindings imply `publish:rounds`, and only a
 * private key may hold them, for games published externally (docs/threat-model.md "One writer per game").
 * @throws InvalidInputError naming the binding that cannot be granted.
 */
function scopesOf(body: CreateBody, external: readonly GameSlug[]): Scope[] {
  const games = publishGamesOf(body.scopes);
  if (games.length > 0 && body.kind !== 'private')
    throw new InvalidInputError('INVALID_KEY', 'scopes: publish:rounds:<game> is for private keys only');
  const engine = games.filter((g) => gameSource(g, external) === 'engine');
  if (engine.length > 0)
    throw new InvalidInputError(
      'INVALID_KEY',
      `scopes: ${engine.map(publishScopeOf).join(', ')}: the round engine writes ${engine.join(', ')} (not in GAMES_EXTERNAL)`,
    );
  const scopes = new Set<Scope>(body.scopes);
  if (games.length > 0) scopes.add('publish:rounds');
  return [...scopes];
}

/** Checks the cross-field rules of a create body. @returns normalised origins. @throws InvalidInputError */
function originsOf(body: CreateBody): string[] {
  const raw = body.allowed_origins ?? [];
  if (body.kind === 'private') {
    if (raw.length > 0)
      throw new InvalidInputError('INVALID_KEY', 'allowed_origins applies to public keys only');
    return [];
  }
  if (raw.length === 0)
    throw new InvalidInputError('INVALID_KEY', 'a public key needs at least one allowed origin');
  if (body.scopes.includes('admin'))
    throw new InvalidInputError('INVALID_KEY', 'a public key cannot hold admin');
  const out = raw.map((o) => {
    const n = normalizeOrigin(o);
    if (n === null)
      throw new InvalidInputError(
        'INVALID_KEY',
        `allowed origin ${JSON.stringify(o)} is not an http(s) origin`,
      );
    return n;
  });
  return [...new Set(out)];
}

/** Text of the 409 that refuses to revoke or delete the last active admin key. */
export const LAST_ADMIN_TEXT =
  'this is the last active admin key: create another admin key first (POST /api/auth/keys with scope admin, or npm run admin-key -- create --name <name>)';

/**
 * Refuses to revoke or delete `k` when it is the only active (not revoked, not deleted) admin key,
 * so the admin API can never lock itself out.
 * @throws ConflictError LAST_ADMIN_KEY (409)
 */
export function assertNotLastAdmin(table: Pick<KeyTable, 'list'>, k: KeyRecord): void {
  if (!k.admin || k.revokedAtMs !== null) return;
  const others = table.list().some((o) => o.keyId !== k.keyId && o.admin && o.revokedAtMs === null);
  if (!others) throw new ConflictError('LAST_ADMIN_KEY', LAST_ADMIN_TEXT);
}

/**
 * Spends one point of the caller's IP and one of the domain before a new browser key is minted
 * (minting must not multiply one IP's request budget).
 * @throws RateLimitedError (429) when either budget is spent.
 */
async function spendMintBudgets(
  budgets: AuthRouteDeps['budgets'],
  ip: string,
  domain: string,
): Promise<void> {
  if (!budgets) return;
  for (const [budget, key] of [
    [budgets.browserKeysPerIp, ip],
    [budgets.browserKeysPerDomain, domain],
  ] as const) {
    const r = await budget.spend(key);
    if (!r.ok) throw new RateLimitedError(r.retryAfterS);
  }
}

/** Registers the seven auth endpoints. */
export function authRoutes(deps: AuthRouteDeps): FastifyPluginAsync {
  const { table, producer, config, lastUsed } = deps;
  const now = deps.now ?? Date.now;
  const append = async (event: Parameters<typeof appendKeyEvent>[2]) => {
    await table.waitFor(await appendKeyEvent(producer, config, event));
  };
  // Revokes and deletes run one at a time in this process, so two concurrent requests cannot each
  // see the other's admin key still active and together remove the last two (docs/decisions/access/0006-first-admin-key-and-no-lock-out.md).
  let removals: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(f: () => Promise<T>): Promise<T> => {
    const run = removals.then(f, f);
    removals = run.catch(() => {});
    return run;
  };
  const existing = (id: string): KeyRecord => {
    const k = isKeyId(id) ? table.get(id) : undefined;
    if (!k) throw new NotFoundError('KEY_NOT_FOUND', 'Key not found');
    return k;
  };

  return async (app) => {
    app.get('/api/auth/scopes', { schema: scopesSchema }, async () => ({
      scopes: SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
    }));

    app.post('/api/auth/token', { schema: tokenSchema }, async (req) => {
      const p = req.principal;
      if (!p) throw new AuthError(401, 'missing', 'a key is required');
      if (p.viaToken)
        throw new AuthError(401, 'malformed', 'a token cannot be exchanged for a token; send the key');
      const { token } = issueToken(table.tokenSecret, p.keyId, now());
      return {
        success: true,
        token,
        expires_in: TOKEN_TTL_S,
        usage: `Valid ${TOKEN_TTL_S} s. REST: X-API-Key or Authorization: Bearer; WebSocket: Sec-WebSocket-Protocol; SSE: ?token=; WebTransport: ?token=. Get a new one per connection.`,
      };
    });

    app.post<{ Body: { visitor_id: string; bound_domain: string } }>(
      '/api/auth/browser-key',
      { schema: browserKeySchema },
      async (req) => {
        const input = checkBrowserKeyInput(req.body.visitor_id, req.body.bound_domain);
        if (!input.ok) throw new InvalidInputError('INVALID_BROWSER_KEY', input.error);
        const d = deriveBrowserKey(table.tokenSecret, input.visitorId, input.domain);
        const cur = table.get(d.keyId);
        if (cur?.revokedAtMs != null) {
          throw new AuthError(403, 'revoked', `browser key ${d.keyId} is revoked`);
        }
        if (!cur) {
          await spendMintBudgets(deps.budgets, clientKey(req), input.domain);
          await append({
            type: 'KeyCreated',
            value: {
              key_id: d.keyId,
              name: `browser ${input.domain}`,
              kind: 'public',
              secret_sha256: secretHash(d.secret),
              scopes: [...BROWSER_KEY_SCOPES],
              rate_limit: BROWSER_KEY_RATE_LIMIT,
              allowed_origins: d.allowedOrigins,
              admin: false,
              visitor_id: input.visitorId,
              bound_domain: input.domain,
              created_at: now(),
            },
          });
        }
        return { success: true, key: d.secret, expires_at: 0, new: !cur };
      },
    );

    // Key attributes from the in-memory table (current as of the last write answered here);
    // last use merged from this process and the api_keys read model (all API processes, batched).
    app.get('/api/auth/keys', { schema: listKeysSchema }, async () => {
      const rows = await deps.sql<{ key_id: string; at: Date }[]>`
        select key_id, last_used_at as at from api_keys where last_used_at is not null and not deleted`;
      const stored = new Map(rows.map((r) => [r.key_id, r.at.getTime()]));
      return { success: true, keys: table.list().map((k) => view(k, lastUsed, stored.get(k.keyId))) };
    });

    app.post<{ Body: CreateBody }>('/api/auth/keys', { schema: createKeySchema }, async (req, reply) => {
      const body = req.body;
      const origins = originsOf(body);
      const scopes = scopesOf(body, config.games.external);
      const secret = newSecret(body.kind);
      const value: KeyCreated = {
        key_id: newKeyId(),
        name: body.name,
        kind: body.kind,
        secret_sha256: secretHash(secret),
        scopes,
        rate_limit: body.rate_limit ?? DEFAULT_RATE_LIMIT[body.kind],
        allowed_origins: origins,
        admin: body.scopes.includes('admin'),
        visitor_id: null,
        bound_domain: null,
        created_at: now(),
      };
      await append({ type: 'KeyCreated', value });
      return reply.code(201).send({ success: true, key: view(existing(value.key_id), lastUsed), secret });
    });

    app.post<{ Params: { id: string } }>(
      '/api/auth/keys/:id/revoke',
      { schema: revokeKeySchema },
      async (req) =>
        oneAtATime(async () => {
          const k = existing(req.params.id);
          assertNotLastAdmin(table, k);
          if (k.revokedAtMs === null)
            await append({ type: 'KeyRevoked', value: { key_id: k.keyId, at: now() } });
          return { success: true, key: view(existing(k.keyId), lastUsed) };
        }),
    );

    app.delete<{ Params: { id: string } }>('/api/auth/keys/:id', { schema: deleteKeySchema }, async (req) =>
      oneAtATime(async () => {
        const k = existing(req.params.id);
        assertNotLastAdmin(table, k);
        await append({ type: 'KeyDeleted', value: { key_id: k.keyId, at: now() } });
        return { success: true, id: k.keyId, deleted: true };
      }),
    );
  };
}
