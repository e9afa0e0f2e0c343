/**
 * Budgets of the API beside the per-request limit of rate-limit.ts (issue 13 item 4), on
 * rate-limiter-flexible: counted in this process, or in the shared Redis of RATE_LIMIT_REDIS_URL
 * so every API node spends one budget. Like the request limit they fail open: when Redis cannot
 * answer, nothing is refused (a limiter outage must not become an API outage).
 *
 * - Failed credentials: every 401 spends one point of the caller's IP (a separate failure budget,
 *   RATE_LIMIT_AUTH_FAILURES per RATE_LIMIT_WINDOW_MS); past it, requests from that IP that carry a
 *   credential get 429 until the window ends, whatever the credential. A brute-force guesser is
 *   stopped; a client whose token merely expired spends one point.
 * - Browser-key minting: a new browser key spends one point of the caller's IP and one of its
 *   bound_domain (RATE_LIMIT_BROWSER_KEYS_PER_IP, RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN per
 *   RATE_LIMIT_BROWSER_KEYS_WINDOW_MS), so one IP cannot multiply its request budget by minting
 *   keys. Asking again for an existing pair's key mints nothing and spends nothing here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { ApiConfig } from './config.ts';
import { RateLimitedError } from './errors.ts';

/** A count of events per key over a fixed window. */
export interface Budget {
  /**
   * Spends one point of `key`.
   * @returns ok, or the seconds until the window ends when the budget is already spent.
   */
  spend(key: string): Promise<{ ok: true } | { ok: false; retryAfterS: number }>;
  /** Whether `key` has spent its budget (no point is spent), and for how long it stays so, in s. */
  exhausted(key: string): Promise<{ exhausted: boolean; retryAfterS: number }>;
}

/**
 * A budget of `points` per `windowMs` per key, in Redis when `redis` is given (keys
 * `<namespace><name>:<key>`), else in memory.
 */
export function createBudget(opts: {
  name: string;
  points: number;
  windowMs: number;
  redis?: Redis | undefined;
  namespace: string;
}): Budget {
  const common = { points: opts.points, duration: Math.max(1, Math.ceil(opts.windowMs / 1000)) };
  const limiter = opts.redis
    ? new RateLimiterRedis({ ...common, storeClient: opts.redis, keyPrefix: `${opts.namespace}${opts.name}` })
    : new RateLimiterMemory({ ...common, keyPrefix: opts.name });
  const wait = (r: RateLimiterRes) => Math.max(1, Math.ceil(r.msBeforeNext / 1000));
  return {
    async spend(key) {
      try {
        await limiter.consume(key, 1);
        return { ok: true };
      } catch (err) {
        // A store error (not a RateLimiterRes) fails open.
        return err instanceof RateLimiterRes ? { ok: false, retryAfterS: wait(err) } : { ok: true };
      }
    },
    async exhausted(key) {
      try {
        const r = await limiter.get(key);
        if (!r || r.consumedPoints < opts.points) return { exhausted: false, retryAfterS: 0 };
        return { exhausted: true, retryAfterS: wait(r) };
      } catch {
        return { exhausted: false, retryAfterS: 0 };
      }
    },
  };
}

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
  const namespace = `${config.kafka.topicNamespace}rate-limit:`;
  const { api } = config;
  return {
    authFailures: createBudget({
      name: 'auth-failures',
      points: api.authFailuresMax,
      windowMs: api.rateLimitWindowMs,
      redis,
      namespace,
    }),
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
