/**
 * Budgets of the API beside the per-request limit of rate-limit.ts, on
 * rate-limiter-flexible: counted in this process, or in the shared Redis of RATE_LIMIT_REDIS_URL
 * so every API node spends one budget. Like the request limit they fail open: when Redis cannot
 * answer, nothing is refused (a limiter outage must not become an API outage).
 *
 * - Failed credentials: every 401 spends one point of the caller's IP (a separate failure budget,
 *   RATE_LIMIT_AUTH_FAILURES per RATE_LIMIT_WINDOW_MS); past it, requests from that IP that carry a
 *   credential get 429 until the window ends, whatever the credential. A brute-force guesser is
 *   stopped; a client whose token merely expired spends one point. The rule and its store are
 *   lib/auth/failure-budget.ts's, which the streaming edges apply too (one budget per IP in Redis).
 * - Browser-key minting: a new browser key spends one point of the caller's IP and one of its
 *   bound_domain (RATE_LIMIT_BROWSER_KEYS_PER_IP, RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN per
 *   RATE_LIMIT_BROWSER_KEYS_WINDOW_MS), so one IP cannot multiply its request budget by minting
 *   keys. Asking again for an existing pair's key mints nothing and spends nothing here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import {
  type Budget,
  createBudget,
  createFailureBudget,
  storeNamespace,
} from '../../lib/auth/failure-budget.ts';
import type { ApiConfig } from './config.ts';
import { RateLimitedError } from './errors.ts';

export type { Budget };

/** The caller's address as the per-IP limits count it (a Unix-socket peer without a forwarded client: its own name). */
export function clientKey(req: FastifyRequest): string {
  return req.ip ?? 'unix-socket';
}

/** Whether the request carries a credential of any kind (API key, token, operator or player bearer). */
function carriesCredential(req: FastifyRequest): boolean {
  return req.headers['x-api-key'] !== undefined || req.headers.authorization !== undefined;
}

/**
 * Registers the failed-credential budget on `app` (the root, so every route has it): 401 answers
 * spend a point of the caller's IP; requests carrying a credential from an IP past the budget are
 * refused with 429 before any credential is checked.
 */
export function registerAuthFailureBudget(app: FastifyInstance, budget: Budget): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!carriesCredential(req)) return;
    const s = await budget.exhausted(clientKey(req));
    if (!s.exhausted) return;
    reply.header('retry-after', String(s.retryAfterS));
    throw new RateLimitedError(s.retryAfterS);
  });
  app.addHook('onResponse', async (req, reply) => {
    if (reply.statusCode === 401) await budget.spend(clientKey(req));
  });
}

/** The three budgets of this file from the API's settings; `redis` is rate-limit.ts's shared store, if any. */
export function createApiBudgets(config: ApiConfig, redis: Redis | undefined) {
  const namespace = storeNamespace(config.kafka.topicNamespace);
  const { api } = config;
  return {
    authFailures: createFailureBudget(
      { max: api.authFailuresMax, windowMs: api.rateLimitWindowMs },
      config.kafka.topicNamespace,
      redis,
    ),
    browserKeysPerIp: createBudget({
      name: 'browser-keys-ip',
      points: api.browserKeysPerIp,
      windowMs: api.browserKeysWindowMs,
      redis,
      namespace,
    }),
    browserKeysPerDomain: createBudget({
      name: 'browser-keys-domain',
      points: api.browserKeysPerDomain,
      windowMs: api.browserKeysWindowMs,
      redis,
      namespace,
    }),
  };
}
export type ApiBudgets = ReturnType<typeof createApiBudgets>;
