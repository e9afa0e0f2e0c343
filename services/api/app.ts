/**
 * The REST API as a fastify instance, built from its dependencies and not listening (tests use
 * `app.inject()`; main.ts calls `listen`). Layout:
 * - root: CORS, error and 404 handling, metrics, OpenAPI, /health, /ready, static demo pages at /
 * - /api/* scope: the per-IP rate limit (docs/contract.md "Limits": 100 a minute) and the rounds routes.
 * - the session API (access/routes.ts: /admin/operators, /games*, /sessions/*, /play/*)
 *   when `auth` is given, with RFC 7807 problem JSON errors.
 *   Static pages, /health, /ready, /metrics and /openapi.json are outside it (docs/decisions/access/0005-rate-limits-across-api-nodes.md).
 */
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Producer } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { KeyTable } from '../../lib/auth/key-table.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { BODY_LIMIT_BYTES, seedFrameworkErrors } from '../../lib/http/error-form.ts';
import type { RoundPhases } from '../../lib/log/round-phases.ts';
import { type Logger, redactUrl } from '../../lib/logger.ts';
import type { EngineClient } from './access/engine-client.ts';
import { accessRoutes } from './access/routes.ts';
import { authHook, LastUsed } from './auth/guard.ts';
import { authRoutes } from './auth/routes.ts';
import type { ApiConfig } from './config.ts';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_ALLOW_ORIGIN, registerCors } from './cors.ts';
import { contractDocumentRoutes } from './docs/routes.ts';
import {
  errorBodySchema,
  NotFoundError,
  problemBodySchema,
  RateLimitedError,
  replyForError,
} from './errors.ts';
import { healthRoutes, READY_TIMEOUT_MS } from './health/routes.ts';
import { ingestRoutes } from './ingest/routes.ts';
import { AJV_OPTIONS, formatSchemaErrors, registerInputPolicy } from './input-policy.ts';
import { type ApiBudgets, createApiBudgets, registerAuthFailureBudget } from './limits.ts';
import { registerMetrics } from './metrics/metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { opsRoutes } from './ops/routes.ts';
import { portalRoutes } from './portal/routes.ts';
import { connectRateLimitStore, registerRateLimit } from './rate-limit.ts';
import { currentRoundRoutes } from './rounds/current.ts';
import { createRoundsQueries } from './rounds/queries.ts';
import { roundsRoutes } from './rounds/routes.ts';
import type { RoundsWindow } from './rounds/window.ts';
import { proxyTrust } from './trust.ts';

export interface ApiDeps {
  readonly config: ApiConfig;
  /** Pool bound to the read-model schema (lib/db/pool.ts createSql); owned and closed by the caller. */
  readonly sql: Sql;
  readonly logger: Logger;
  /** How long /ready waits for `select 1`, in ms (default 1000). */
  readonly readyTimeoutMs?: number;
  /** Registry of GET /metrics (default: a new `service="api"` one); main.ts shares it with the key table. */
  readonly registry?: Registry;
  /**
   * Access control: the key table and a producer for `auth-keys`. Without it the API has
   * no auth routes and ignores credentials (the rounds-only tests build it so).
   */
  readonly auth?: { readonly table: KeyTable; readonly producer: Producer; readonly lastUsed?: LastUsed };
  /**
   * The rounds' lifecycle as read from the log and the round engine's cash-out decision:
   * GET /api/rounds/current/:game, and, with `auth`, the session API's bets and cash-outs.
   */
  readonly play?: { readonly phases: RoundPhases; readonly engine: EngineClient };
  /** The newest rounds in memory (rounds/window.ts, fed by rounds/window-feed.ts); without it every read queries Postgres. */
  readonly roundsWindow?: RoundsWindow;
}

/**
 * Answers the errors fastify raises before any hook runs (a malformed percent-encoding, a path
 * parameter over the router's limit) in the form of the path (problem JSON on the session API)
 * and with the same CORS headers as every other error of the API.
 */
const apiFrameworkErrors = seedFrameworkErrors({
  'access-control-allow-origin': CORS_ALLOW_ORIGIN,
  'access-control-allow-methods': CORS_ALLOW_METHODS,
  'access-control-allow-headers': CORS_ALLOW_HEADERS,
});

/** Builds the API. @throws when a plugin fails to register (e.g. an unreadable public dir). */
export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const { config, sql } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Per-request lines go out at debug (onResponse below): a polled API would flood info logs.
    logController: new LogController({ disableRequestLogging: true }),
    // The router's default (100) would send a slug of 101+ characters to the 404 handler; the seed
    // wants 400 "Invalid game slug" for any over-long slug. Node caps the whole head at 16 KiB.
    routerOptions: { maxParamLength: 16_384 },
    // 413 past it; the gateway answers the same before proxying (services/gateway/gateway.ts).
    bodyLimit: BODY_LIMIT_BYTES,
    // The per-IP limits count the browser named in X-Forwarded-For only when the proxy's Unix
    // socket (or a TCP peer of API_TRUST_PROXY) says so; on the TCP port, the peer (trust.ts).
    trustProxy: proxyTrust(deps.config.api.trustProxy),
    // The input policy (input-policy.ts): strict types, nothing dropped, errors naming the field.
    ajv: { customOptions: { ...AJV_OPTIONS } },
    schemaErrorFormatter: formatSchemaErrors,
    frameworkErrors: apiFrameworkErrors,
  });
  registerInputPolicy(app);

  app.addSchema(errorBodySchema);
  app.addSchema(problemBodySchema);
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = replyForError(err);
    if (status === 500) req.log.error({ err }, 'request failed');
    else if (status === 503) req.log.warn({ err }, 'dependency unavailable');
    if (err instanceof RateLimitedError) reply.header('retry-after', String(err.retryAfterS));
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((_req, reply) => {
    const { status, body } = replyForError(new NotFoundError('ROUTE_NOT_FOUND', 'Not Found'));
    return reply.code(status).send(body);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug(
      { method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: reply.elapsedTime },
      'request',
    );
  });

  await registerCors(app);
  registerMetrics(app, deps.registry);
  // Counters per process, or in the shared Redis (RATE_LIMIT_REDIS_URL) for every limit and budget.
  const store = await connectRateLimitStore(app, config);
  const budgets: ApiBudgets = createApiBudgets(config, store);
  registerAuthFailureBudget(app, budgets.authFailures);
  await registerOpenApi(app);
  await app.register(contractDocumentRoutes());
  await app.register(healthRoutes(sql, deps.readyTimeoutMs ?? READY_TIMEOUT_MS));

  const auth = deps.auth;
  const lastUsed = auth?.lastUsed ?? new LastUsed();
  await app.register(async (api) => {
    // Before the rate limit's own onRequest hook, so the limit can count per key.
    if (auth)
      api.addHook('onRequest', authHook({ table: auth.table, requireApi: config.auth.requireApi, lastUsed }));
    // Per key or per IP; counters per process or in Redis (RATE_LIMIT_REDIS_URL): rate-limit.ts.
    await registerRateLimit(api, config, store);
    await api.register(roundsRoutes(createRoundsQueries(sql), deps.roundsWindow));
    if (deps.play) await api.register(currentRoundRoutes(deps.play.phases));
    if (auth) {
      await api.register(
        authRoutes({ config, sql, table: auth.table, producer: auth.producer, lastUsed, budgets }),
      );
      if (deps.play)
        await api.register(
          ingestRoutes({
            config,
            sql,
            producer: auth.producer,
            phases: deps.play.phases,
            logger: deps.logger,
            skewMs: config.games.skewMs,
          }),
        );
    }
  });

  // The session API (problem JSON errors, outside the /api per-IP limit: access/routes.ts).
  if (auth && deps.play)
    await app.register(
      accessRoutes({ config, sql, producer: auth.producer, table: auth.table, ...deps.play }),
    );
  // The operator portal (portal/routes.ts: its sign-in link, cookie session, /api/portal/*).
  if (auth)
    await app.register(portalRoutes({ config, sql, table: auth.table, authFailures: budgets.authFailures }));

  // The ops console's API (ops/routes.ts: topics, consumer groups, dead letters, rebuilds, edges).
  if (auth) await app.register(opsRoutes({ config, table: auth.table, logger: deps.logger }));

  await app.register(fastifyStatic, { root: config.api.publicDir, prefix: '/' });
  return app;
}
