/**
 * Rate limits across API nodes (docs/decisions/access/0005-rate-limits-across-api-nodes.md):
 * two API instances in this process on a real Postgres and a real Redis. With RATE_LIMIT_REDIS_URL
 * they spend one budget; without it each has its own (the documented per-process behaviour). With
 * Redis unreachable, at start or during a run, requests are answered (fail open) and the outage is
 * logged and in /metrics. Shared Redis: scripts/redis.sh (or RATE_LIMIT_REDIS_URL from the
 * environment); the outage test stops a throwaway redis-server of its own, disturbing nobody.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.ts';
import { startTestApi, type TestApi } from '../../tests/support/api.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort } from '../../tests/support/processes.ts';

const LOCAL_REDIS = loadConfig(process.env).api.rateLimitRedisUrl || 'redis://127.0.0.1:56379';
const MAX = 6;
const SEED_429 = { error: 'Too many requests, please slow down', success: false };

const opened: TestApi[] = [];
async function node(overrides: Record<string, string | number>, logger?: ReturnType<typeof createLogger>) {
  const t = await startTestApi(
    { RATE_LIMIT_MAX: MAX, RATE_LIMIT_WINDOW_MS: 60_000, ...overrides },
    { logger },
  );
  opened.push(t);
  return t;
}
afterAll(async () => {
  await Promise.all(opened.map((t) => t.close()));
});

const get = (t: TestApi, ip: string) => t.app.inject({ url: '/api/games', remoteAddress: ip });
let ipSeq = 0;
const nextIp = () => `10.7.0.${++ipSeq}`;

async function metric(t: TestApi, name: string): Promise<number> {
  const value = sampleValue((await t.app.inject({ url: '/metrics' })).body, name);
  if (value === undefined) throw new Error(`${name} not in /metrics`);
  return value;
}

/** Polls `check` every 50 ms until it holds (tests/support/processes.ts waitFor). */
const until = (what: string, check: () => Promise<boolean>, timeoutMs: number) =>
  waitFor(what, async () => ((await check()) ? true : undefined), timeoutMs, 50);

describe('two API nodes sharing one Redis (RATE_LIMIT_REDIS_URL)', () => {
  const ns = `t-${randomBytes(4).toString('hex')}-`;
  let redis: Redis;
  let a: TestApi;
  let b: TestApi;
  beforeAll(async () => {
    redis = new Redis(LOCAL_REDIS, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect().catch((err: unknown) => {
      throw new Error(
        `no Redis at ${LOCAL_REDIS}: run 'bash scripts/infra.sh up' (or scripts/redis.sh start)`,
        {
          cause: err,
        },
      );
    });
    const shared = { RATE_LIMIT_REDIS_URL: LOCAL_REDIS, TOPIC_NAMESPACE: ns };
    [a, b] = await Promise.all([node(shared), node(shared)]);
  });
  afterAll(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${ns}rate-limit:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it(`answers 429 after ${MAX} requests in total, alternating between the nodes`, async () => {
    const ip = nextIp();
    const seen: [string, number, unknown][] = [];
    for (let i = 0; i < MAX; i++) {
      const [name, t] = i % 2 === 0 ? ['a', a] : ['b', b];
      const res = await get(t, ip);
      expect(res.headers['x-ratelimit-limit']).toBe(String(MAX));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(Number.isInteger(reset) && reset > 0 && reset <= 60).toBe(true);
      seen.push([name, res.statusCode, res.headers['x-ratelimit-remaining']]);
    }
    expect(seen).toEqual([
      ['a', 200, '5'],
      ['b', 200, '4'],
      ['a', 200, '3'],
      ['b', 200, '2'],
      ['a', 200, '1'],
      ['b', 200, '0'],
    ]);
    for (const t of [a, b]) {
      const limited = await get(t, ip);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual(SEED_429);
      expect(limited.headers).toMatchObject({
        'x-ratelimit-limit': String(MAX),
        'x-ratelimit-remaining': '0',
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The one counter lives in Redis under this run's namespace, expiring with the window.
    expect(await redis.get(`${ns}rate-limit:${ip}`)).toBe(String(MAX + 2));
    const pttl = await redis.pttl(`${ns}rate-limit:${ip}`);
    expect(pttl > 0 && pttl <= 60_000).toBe(true);
    expect(await metric(a, 'rate_limit_store_up')).toBe(1);
  });

  it('closes its Redis connection when the app closes (SIGTERM in main.ts)', async () => {
    const named = async () =>
      String(await redis.client('LIST'))
        .split('\n')
        .filter((l: string) => l.includes('name=casino-api-rate-limit ')).length;
    const c = await node({ RATE_LIMIT_REDIS_URL: LOCAL_REDIS, TOPIC_NAMESPACE: ns });
    const before = await named();
    expect(before).toBeGreaterThanOrEqual(3); // a, b and c
    opened.splice(opened.indexOf(c), 1);
    await c.close();
    await until('the closed node to leave CLIENT LIST', async () => (await named()) === before - 1, 5_000);
  });

  it('keeps a separate shared budget per client address', async () => {
    const first = nextIp();
    for (let i = 0; i < MAX; i++) await get(i % 2 ? a : b, first);
    expect((await get(a, first)).statusCode).toBe(429);
    const other = await get(b, nextIp());
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe(String(MAX - 1));
  });
});

describe('two API nodes without RATE_LIMIT_REDIS_URL (per-process counters)', () => {
  it(`allow ${MAX} each, ${2 * MAX} in total`, async () => {
    const [a, b] = await Promise.all([node({}), node({})]);
    const ip = nextIp();
    for (const t of [a, b]) {
      for (let i = 0; i < MAX; i++) expect((await get(t, ip)).statusCode).toBe(200);
      const limited = await get(t, ip);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual(SEED_429);
    }
    expect((await a.app.inject({ url: '/metrics' })).body).not.toContain('rate_limit_store_up');
  });
});

/** Log lines of one node, parsed. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger('api-test', 'info', { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { lines, logger, messages: () => lines.map((l) => l.msg) };
}

describe('Redis unreachable: fail open', () => {
  it('starts within the connect bound and answers every request, logged and in /metrics', async () => {
    const log = capture();
    const started = Date.now();
    const t = await node({ RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, log.logger);
    expect(Date.now() - started).toBeLessThan(5_000);
    const ip = nextIp();
    for (let i = 0; i < 2 * MAX; i++) expect((await get(t, ip)).statusCode).toBe(200);
    expect(await metric(t, 'rate_limit_store_up')).toBe(0);
    expect(await metric(t, 'rate_limit_store_errors_total')).toBeGreaterThan(0);
    const warned = log.messages().filter((m) => m.includes('unreachable'));
    expect(warned).toHaveLength(1);
  });

  describe('when Redis stops during a run and comes back', () => {
    let server: ChildProcess | undefined;
    let port: number;
    const startRedis = async () => {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
      const child = spawn('redis-server', args, { stdio: 'ignore' });
      server = child;
      const failed = once(child, 'error').then(([err]: Error[]) => {
        throw new Error(
          `redis-server not started (bash scripts/redis.sh start installs it): ${err?.message}`,
        );
      });
      const ready = until(
        'redis-server to accept connections',
        async () => {
          const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null });
          probe.on('error', () => {}); // a refused probe is expected while the server starts
          const ok = await probe.connect().then(
            () => true,
            () => false,
          );
          probe.disconnect();
          return ok;
        },
        10_000,
      );
      await Promise.race([failed, ready]);
    };
    const stopRedis = async () => {
      if (!server || server.exitCode !== null) return;
      server.kill('SIGTERM');
      await once(server, 'exit');
    };
    beforeAll(async () => {
      port = await freePort();
      await startRedis();
    });
    afterAll(stopRedis);

    it('limits, then lets requests through, then limits again', async () => {
      const log = capture();
      const t = await node(
        { RATE_LIMIT_MAX: 3, RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${port}` },
        log.logger,
      );
      const ip = nextIp();
      const statuses = async (n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await get(t, ip)).statusCode);
        return out;
      };
      expect(await statuses(4)).toEqual([200, 200, 200, 429]);

      await stopRedis();
      await until('store_up 0', async () => (await metric(t, 'rate_limit_store_up')) === 0, 5_000);
      expect(await statuses(4)).toEqual([200, 200, 200, 200]);
      expect(log.messages().filter((m) => m.includes('unreachable'))).toHaveLength(1);

      // A fresh server has no counters: a new window starts when the client is reconnected.
      await startRedis();
      await until('store_up 1', async () => (await metric(t, 'rate_limit_store_up')) === 1, 10_000);
      expect(await statuses(4)).toEqual([200, 200, 200, 429]);
      expect(log.messages()).toContain('shared rate-limit store reachable again');
    });
  });
});
