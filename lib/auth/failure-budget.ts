/**
 * The failed-credential budget, one rule for the API and every streaming edge (WebSocket, SSE,
 * gRPC and the gRPC proxy on the Node edge; WebTransport on the Deno edge):
 *
 * - every refusal of a credential as invalid (401) spends one point of the client's IP, up to
 *   RATE_LIMIT_AUTH_FAILURES per RATE_LIMIT_WINDOW_MS (a fixed window, rate-limiter-flexible);
 * - past the budget, every attempt from that IP that carries a credential is refused (HTTP 429 with
 *   Retry-After, gRPC RESOURCE_EXHAUSTED) before the credential is checked, a valid one included,
 *   until the window ends. A guesser is stopped; a client whose token merely expired spends one point.
 *
 * Where the points live: in the Redis of RATE_LIMIT_REDIS_URL when it is set, under one key per IP
 * (`<TOPIC_NAMESPACE>rate-limit:auth-failures:<ip>`) that the API and both edges all spend and
 * read, so a guesser moving between the REST API and the streams, or between processes, meets one
 * budget; without it each process counts for itself (N processes allow N × the budget, and each
 * further WebSocket thread of an edge, EDGE_WS_THREADS, is such a process). Like the API's request
 * limit it fails open: when Redis cannot answer, nothing is refused (a limiter outage must not
 * become an outage), which `rate_limit_store_up 0` shows.
 *
 * Runs under Node and Deno (services/edge-webtransport); ioredis is loaded only when a store is set.
 */
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.ts';
import type { AccessRequest, AccessVerdict, StreamAccess, StreamProtocol } from '../stream/access.ts';

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
 * `<namespace><name>:<key>`), else in memory. Store errors fail open (never refused).
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

/** Key prefix of every limit and budget in the shared store: TOPIC_NAMESPACE keeps tenants and test runs apart. */
export function storeNamespace(topicNamespace: string): string {
  return `${topicNamespace}rate-limit:`;
}

/** Name of the failed-credential budget in the store (the same for the API and the edges). */
export const FAILURE_BUDGET_NAME = 'auth-failures';

/** The settings of the budget (lib/config/shared.ts failureBudgetSection; the API's same settings). */
export interface FailureBudgetSettings {
  /** 401 answers per client IP per window. */
  readonly max: number;
  readonly windowMs: number;
}

/** The failed-credential budget over `redis` (the shared store) or, without it, this process's memory. */
export function createFailureBudget(
  settings: FailureBudgetSettings,
  topicNamespace: string,
  redis: Redis | undefined,
): Budget {
  return createBudget({
    name: FAILURE_BUDGET_NAME,
    points: settings.max,
    windowMs: settings.windowMs,
    redis,
    namespace: storeNamespace(topicNamespace),
  });
}

/** A limit check waits at most this long (ms) for Redis before it is let through. */
export const STORE_COMMAND_TIMEOUT_MS = 250;
/** Start-up waits at most this long (ms) for the first connection; later ones are retried in the background. */
export const STORE_CONNECT_TIMEOUT_MS = 2_000;

/** `host:port` of a Redis URL, without credentials, for log lines. */
function endpoint(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port}`;
}

/** The shared store, connected, and how to close it. */
export interface SharedStore {
  readonly redis: Redis;
  /** Quits (or drops) the connection; no further warnings are logged. */
  close(): Promise<void>;
}

/**
 * Connects the shared rate-limit store of RATE_LIMIT_REDIS_URL: an ioredis client tuned for a
 * limiter (@fastify/rate-limit's README warns that ioredis' defaults are not): no offline queue and
 * a command timeout, so a check never waits on a reconnect; reconnects forever in the background.
 * Waits up to STORE_CONNECT_TIMEOUT_MS for the first connection so the first requests are counted;
 * past that the caller starts failing open. One warning per outage, `shared rate-limit store
 * reachable again` at its end; `rate_limit_store_up` and `rate_limit_store_errors_total` in `registry`.
 * Never throws for an unreachable Redis.
 * @param connectionName the client's name in Redis's CLIENT LIST (e.g. casino-api-rate-limit).
 */
export async function connectSharedStore(
  url: string,
  o: { readonly logger: Logger; readonly registry: Registry; readonly connectionName: string },
): Promise<SharedStore> {
  const log = o.logger.child({ component: 'rate-limit', store: endpoint(url) });
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    connectionName: o.connectionName,
    connectTimeout: STORE_CONNECT_TIMEOUT_MS,
    commandTimeout: STORE_COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
  const errors = new Counter({
    name: 'rate_limit_store_errors_total',
    help: 'Errors of the connection to the shared rate-limit store (Redis); while it is down, limits and budgets are not applied.',
    registers: [o.registry],
  });
  new Gauge({
    name: 'rate_limit_store_up',
    help: '1 when the shared rate-limit store (Redis) is connected, else 0 (requests pass unlimited: fail open).',
    registers: [o.registry],
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
      'shared rate-limit store unreachable: requests pass unlimited until it is back',
    );
  };
  redis.on('error', (err: Error) => {
    errors.inc();
    outage(err);
  });
  redis.on('close', () => outage());
  redis.on('ready', () => {
    if (down) log.info('shared rate-limit store reachable again');
    else log.info('rate-limit counters shared in Redis');
    down = false;
  });

  // The first 'error' ends the wait too: a refused connection will not turn ready within it.
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, STORE_CONNECT_TIMEOUT_MS);
    redis.once('ready', done);
    redis.once('error', done);
  });
  return {
    redis,
    async close() {
      closing = true;
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}

/** A stream access request with the client address the budget counts. */
export interface ClientAccessRequest extends AccessRequest {
  /** The client's IP as the transport resolved it (lib/http/trust.ts clientAddress). */
  readonly client: string;
}

/** The stream access checks behind the failed-credential budget. */
export interface GuardedStreamAccess extends Omit<StreamAccess, 'check'> {
  /**
   * As StreamAccess.check, and: a credential from a client past the budget is refused with 429
   * (reason `rate_limited`, `retryAfterS`) before it is checked; a 401 spends one point.
   */
  check(protocol: StreamProtocol, req: ClientAccessRequest, nowMs: number): Promise<AccessVerdict>;
}

/** Text of the refusal past the budget. */
export const FAILURE_BUDGET_TEXT = 'too many failed credentials from this address';

/**
 * Puts `access` behind `budget` (the edges' side of the rule above).
 * @param refusals edge_auth_refusals_total, counting the budget's refusals as reason `rate_limited`.
 */
export function guardStreamAccess(
  access: StreamAccess,
  budget: Budget,
  refusals?: { inc(labels: { protocol: string; reason: string }): void },
): GuardedStreamAccess {
  return {
    async check(protocol, req, nowMs) {
      if (req.credential !== undefined && req.credential !== '') {
        const s = await budget.exhausted(req.client);
        if (s.exhausted) {
          refusals?.inc({ protocol, reason: 'rate_limited' });
          return {
            ok: false,
            status: 429,
            reason: 'rate_limited',
            message: FAILURE_BUDGET_TEXT,
            retryAfterS: s.retryAfterS,
          };
        }
      }
      const v = await access.check(protocol, req, nowMs);
      if (!v.ok && v.status === 401) await budget.spend(req.client);
      return v;
    },
    track: (principal, close, protocol) => access.track(principal, close, protocol),
    close: () => access.close(),
  };
}

/** The failed-credential budget of a process, and how to release its store. */
export interface ProcessFailureBudget {
  readonly budget: Budget;
  /** Closes the shared store's connection, if any. */
  close(): Promise<void>;
}

/**
 * The budget of an edge process: in the shared store when `settings.redisUrl` is set (connected
 * here; metrics in `registry`), else in this process's memory.
 */
export async function startFailureBudget(o: {
  readonly settings: FailureBudgetSettings & { readonly redisUrl: string };
  readonly topicNamespace: string;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly connectionName: string;
}): Promise<ProcessFailureBudget> {
  const store =
    o.settings.redisUrl === ''
      ? undefined
      : await connectSharedStore(o.settings.redisUrl, {
          logger: o.logger,
          registry: o.registry,
          connectionName: o.connectionName,
        });
  return {
    budget: createFailureBudget(o.settings, o.topicNamespace, store?.redis),
    close: async () => store?.close(),
  };
}
