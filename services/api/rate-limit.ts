/**
 * The /api rate limit (docs/contract.md "Limits") on @fastify/rate-limit: per key id when
 * a credential was accepted (the key's `rate_limit` per window), else per client IP
 * (RATE_LIMIT_MAX), with the seed's X-Ratelimit-* headers and 429 body.
 *
 * Where the counters live (docs/decisions/access/0005-rate-limits-across-api-nodes.md):
 * - RATE_LIMIT_REDIS_URL empty: in this process. N API nodes behind a balancer allow up to N × a limit.
 * - RATE_LIMIT_REDIS_URL set: in that Redis (the plugin's `redis` store: one atomic Lua INCR+PEXPIRE
 *   per request, keys `<TOPIC_NAMESPACE>rate-limit:<key id or IP>`), so every node spends one budget.
 *   When Redis is unreachable or slower than STORE_COMMAND_TIMEOUT_MS (lib/auth/failure-budget.ts) the request is let through
 *   (fail open, the plugin's `skipOnError`): a limiter outage must not become an API outage. It is
 *   logged once per outage (warn) and visible as `rate_limit_store_up 0` and a growing
 *   `rate_limit_store_errors_total` on /metrics.
 */
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { connectSharedStore, storeNamespace as namespaceOf } from '../../lib/auth/failure-budget.ts';
import type { Logger } from '../../lib/logger.ts';
import type { ApiConfig } from './config.ts';
import { RateLimitedError } from './errors.ts';
import { clientKey } from './limits.ts';

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
  return namespaceOf(config.kafka.topicNamespace);
}

/**
 * The shared store (lib/auth/failure-budget.ts connectSharedStore, which the edges use too) with
 * its metrics on the API's /metrics and its log lines in the API's log; closed when `api` closes.
 */
async function connectStore(api: FastifyInstance, url: string): Promise<Redis> {
  const store = await connectSharedStore(url, {
    logger: api.log as unknown as Logger,
    registry: api.metricsRegistry,
    connectionName: 'casino-api-rate-limit',
  });
  api.addHook('onClose', () => store.close());
  return store.redis;
}
