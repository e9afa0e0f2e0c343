/**
 * The /api rate limit (seed 000 "Limits"; issue 4 item 7) on @fastify/rate-limit: per key id when
 * a credential was accepted (the key's `rate_limit` per window), else per client IP
 * (RATE_LIMIT_MAX), with the seed's X-Ratelimit-* headers and 429 body.
 *
 * Where the counters live (docs/decisions.md "Rate limits across API nodes"):
 * - RATE_LIMIT_REDIS_URL empty: in this process. N API nodes behind a balancer allow up to N × a limit.
 * - RATE_LIMIT_REDIS_URL set: in that Redis (the plugin's `redis` store: one atomic Lua INCR+PEXPIRE
 *   per request, keys `<TOPIC_NAMESPACE>rate-limit:<key id or IP>`), so every node spends one budget.
 *   When Redis is unreachable or slower than STORE_COMMAND_TIMEOUT_MS the request is let through
 *   (fail open, the plugin's `skipOnError`): a limiter outage must not become an API outage. It is
 *   logged once per outage (warn) and visible as `rate_limit_store_up 0` and a growing
 *   `rate_limit_store_errors_total` on /metrics.
 */
import { once } from 'node:events';
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import type { ApiConfig } from './config.ts';
import { RateLimitedError } from './errors.ts';
import { clientKey } from './limits.ts';

/** A limit check waits at most this long (ms) for Redis before the request is let through. */
export const STORE_COMMAND_TIMEOUT_MS = 250;
/** Start-up waits at most this long (ms) for the first connection; later ones are retried in the background. */
export const STORE_CONNECT_TIMEOUT_MS = 2_000;

/**
 * The shared store of RATE_LIMIT_REDIS_URL, connected (closed when `app` closes), or undefined when
 * the counters are per process. The request limit here and the budgets of limits.ts share it.
 * An unreachable Redis does not throw (fail open).
 */
export async function connectRateLimitStore(
  app: FastifyInstance,
  config: ApiConfig,
): Promise<Redis | undefined> {
  const url = config.api.rateLimitRedisUrl;
  return url === '' ? undefined : connectStore(app, url);
}

/**
 * Registers the limit on `api` (a plugin scope: it covers the routes registered on `api` after
 * this call), counting in `store` (connectRateLimitStore) when there is one.
 * @throws when the plugin fails to register.
 */
export async function registerRateLimit(
  api: FastifyInstance,
  config: ApiConfig,
  store: Redis | undefined,
): Promise<void> {
  const shared = store ? { redis: store, nameSpace: storeNamespace(config), skipOnError: true } : {};
  await api.register(rateLimit, {
    global: true,
    // Per key when authenticated (the key's rate_limit per window), else per IP (RATE_LIMIT_MAX).
    keyGenerator: (req) => (req.principal ? `key:${req.principal.keyId}` : clientKey(req)),
    max: (req) => req.principal?.rateLimit ?? config.api.rateLimitMax,
    timeWindow: config.api.rateLimitWindowMs,
    errorResponseBuilder: (_req, ctx) => new RateLimitedError(Math.ceil(ctx.ttl / 1000)),
    ...shared,
  } satisfies RateLimitPluginOptions);
}

/** Key prefix in the shared store: TOPIC_NAMESPACE keeps tenants and test runs apart, as for topics. */
export function storeNamespace(config: ApiConfig): string {
  return `${config.kafka.topicNamespace}rate-limit:`;
}

/** `host:port` of a Redis URL, without credentials, for log lines. */
function endpoint(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port}`;
}

/**
 * An ioredis client for the plugin, tuned for a limiter (the plugin's README warns that ioredis'
 * defaults are not): no offline queue and a command timeout, so a request never waits on a
 * reconnect; reconnects forever in the background. Waits up to STORE_CONNECT_TIMEOUT_MS for the
 * first connection so the first requests are counted; past that the API starts failing open.
 */
async function connectStore(api: FastifyInstance, url: string): Promise<Redis> {
  const log = api.log.child({ component: 'rate-limit', store: endpoint(url) });
  const redis = new Redis(url, {
    connectionName: 'casino-api-rate-limit',
    connectTimeout: STORE_CONNECT_TIMEOUT_MS,
    commandTimeout: STORE_COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
  const errors = new Counter({
    name: 'rate_limit_store_errors_total',
    help: 'Errors of the connection to the shared rate-limit store (Redis); while it is down, /api is not limited.',
    registers: [api.metricsRegistry],
  });
  new Gauge({
    name: 'rate_limit_store_up',
    help: '1 when the shared rate-limit store (Redis) is connected, else 0 (requests pass unlimited: fail open).',
    registers: [api.metricsRegistry],
    collect() {
      this.set(redis.status === 'ready' ? 1 : 0);
    },
  });
  // One warning per outage: it starts with a refused connect or a dropped connection, and ends at 'ready'.
  let down = false;
  let closing = false;
  const outage = (err?: Error) => {
    if (down || closing) return;
    down = true;
    log.warn(
      err ? { err } : {},
      'shared rate-limit store unreachable: /api requests pass unlimited until it is back',
    );
  };
  redis.on('error', (err) => {
    errors.inc();
    outage(err);
  });
  redis.on('close', () => outage());
  redis.on('ready', () => {
    if (down) log.info('shared rate-limit store reachable again');
    else log.info('rate-limit counters shared in Redis');
    down = false;
  });
  api.addHook('onClose', async () => {
    closing = true;
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  });

  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), STORE_CONNECT_TIMEOUT_MS);
  // The first 'error' ends the wait too: a refused connection will not turn ready within it.
  await Promise.race([
    once(redis, 'ready', { signal: ac.signal }),
    once(redis, 'error', { signal: ac.signal }),
  ])
    .catch(() => {})
    .finally(() => {
      clearTimeout(timer);
      ac.abort();
    });
  return redis;
}
