/**
 * Cross-cutting behaviour of the API on a real Postgres: CORS, the per-IP rate limit, the
 * OpenAPI document, health, readiness, metrics, the dashboard, and a Postgres outage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../tests/support/api.ts';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type, X-API-Key, Authorization',
};

describe('API on a reachable database', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi({ RATE_LIMIT_MAX: 3, RATE_LIMIT_WINDOW_MS: 60_000, API_TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  // Each test that touches /api/* uses its own client address: the budget is per IP.
  let ipSeq = 0;
  const nextIp = () => `10.1.0.${++ipSeq}`;

  describe('CORS', () => {
    it.each([
      ['a success', '/api/games', 200],
      ['a client error', '/api/latest/Nope', 400],
      ['an unknown game', '/api/latest/poker', 404],
      ['an unknown route', '/api/nothing-here', 404],
      ['the dashboard', '/', 200],
      ['health', '/health', 200],
      ['the OpenAPI document', '/openapi.json', 200],
    ])('are on %s (%s → %i)', async (_case, url, status) => {
      const res = await t.app.inject({
        url,
        remoteAddress: nextIp(),
        headers: { origin: 'https://example.com' },
      });
      expect(res.statusCode).toBe(status);
      expect(res.headers).toMatchObject(CORS);
    });

    it.each([
      ['a browser preflight', { origin: 'https://example.com', 'access-control-request-method': 'GET' }],
      ['a bare OPTIONS', {}],
    ])('answer %s with 204 and the seed headers', async (_case, headers) => {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/api/history/crash', headers });
      expect(res.statusCode).toBe(204);
      expect(res.headers).toMatchObject(CORS);
      expect(res.body).toBe('');
    });

    it('expose the rate-limit headers to cross-origin scripts', async () => {
      const res = await t.app.inject({ url: '/api/games', remoteAddress: nextIp() });
      expect(String(res.headers['access-control-expose-headers'])).toContain('X-Ratelimit-Remaining');
    });
  });

  describe('rate limit (3 per minute in this test)', () => {
    it('counts down in the X-Ratelimit headers, then answers 429 with the seed body', async () => {
      const ip = nextIp();
      const seen: [number, string | undefined][] = [];
      for (const url of ['/api/games', '/api/latest/crash', '/api/history/crash?limit=1']) {
        const res = await t.app.inject({ url, remoteAddress: ip });
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        const reset = Number(res.headers['x-ratelimit-reset']);
        expect(Number.isInteger(reset) && reset > 0 && reset <= 60).toBe(true);
        seen.push([res.statusCode, res.headers['x-ratelimit-remaining'] as string | undefined]);
      }
      // latest/crash has no rounds here: a 404 still spends budget.
      expect(seen).toEqual([
        [200, '2'],
        [404, '1'],
        [200, '0'],
      ]);
      const limited = await t.app.inject({ url: '/api/history/type/multiplier', remoteAddress: ip });
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: 'Too many requests, please slow down', success: false });
      expect(limited.headers).toMatchObject({
        ...CORS,
        'x-ratelimit-limit': '3',
        'x-ratelimit-remaining': '0',
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('keeps a separate budget per client address', async () => {
      const a = nextIp();
      for (let i = 0; i < 4; i++) await t.app.inject({ url: '/api/games', remoteAddress: a });
      expect((await t.app.inject({ url: '/api/games', remoteAddress: a })).statusCode).toBe(429);
      const other = await t.app.inject({ url: '/api/games', remoteAddress: nextIp() });
      expect(other.statusCode).toBe(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('2');
    });

    it('behind a proxy trusted by address (API_TRUST_PROXY), counts the client named in X-Forwarded-For', async () => {
      const browser = nextIp();
      const viaGateway = (xff: string) =>
        t.app.inject({ url: '/api/games', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': xff } });
      for (let i = 0; i < 3; i++) expect((await viaGateway(browser)).statusCode).toBe(200);
      expect((await viaGateway(browser)).statusCode).toBe(429);
      expect((await viaGateway(nextIp())).statusCode).toBe(200); // another browser, same gateway
    });

    it('ignores X-Forwarded-For from an address that is not a trusted proxy', async () => {
      const client = nextIp();
      for (let i = 0; i < 3; i++) {
        const res = await t.app.inject({
          url: '/api/games',
          remoteAddress: client,
          headers: { 'x-forwarded-for': nextIp() },
        });
        expect(res.statusCode).toBe(200);
      }
      const spoofed = await t.app.inject({
        url: '/api/games',
        remoteAddress: client,
        headers: { 'x-forwarded-for': nextIp() },
      });
      expect(spoofed.statusCode).toBe(429);
    });

    it('does not count or limit static pages, /health, /ready, /metrics and /openapi.json', async () => {
      const ip = nextIp();
      for (let i = 0; i < 5; i++) {
        for (const url of ['/', '/health', '/ready', '/metrics', '/openapi.json']) {
          const res = await t.app.inject({ url, remoteAddress: ip });
          expect(res.statusCode).toBe(200);
          expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        }
      }
      const api = await t.app.inject({ url: '/api/games', remoteAddress: ip });
      expect(api.headers['x-ratelimit-remaining']).toBe('2');
    });
  });

  describe('OpenAPI', () => {
    it('is OpenAPI 3.0.0, version 1.0.0, generated from the route schemas', async () => {
      const res = await t.app.inject('/openapi.json');
      expect(res.statusCode).toBe(200);
      const doc = res.json();
      expect(doc.openapi).toBe('3.0.0');
      expect(doc.info.version).toBe('1.0.0');
      for (const p of [
        '/api/games',
        '/api/latest/{game}',
        '/api/history/{game}',
        '/api/history/type/{type}',
      ]) {
        expect(doc.paths[p]?.get?.responses?.['200']).toBeDefined();
      }
      const limit = doc.paths['/api/history/{game}'].get.parameters.find(
        (x: { name: string }) => x.name === 'limit',
      );
      expect(limit).toMatchObject({
        in: 'query',
        schema: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
      });
      expect(doc.components.schemas.ErrorBody.required).toEqual(['error', 'success']);
      expect(doc.paths['/api/latest/{game}'].get.responses['404'].content['application/json'].schema).toEqual(
        {
          $ref: '#/components/schemas/ErrorBody',
        },
      );
      expect(doc.paths['/metrics']).toBeUndefined();
    });
  });

  describe('health, readiness, metrics, dashboard', () => {
    it('answers /health and /ready while the database answers', async () => {
      expect((await t.app.inject('/health')).json()).toMatchObject({ status: 'ok' });
      const ready = await t.app.inject('/ready');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    });

    it('exposes default metrics and request durations by route pattern', async () => {
      await t.app.inject({ url: '/api/history/crash?limit=2', remoteAddress: nextIp() });
      const res = await t.app.inject('/metrics');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toMatch(/process_cpu_user_seconds_total\{service="api"\} /);
      expect(res.body).toMatch(
        /http_request_duration_seconds_count\{[^}]*method="GET",route="\/api\/history\/:game",status_code="200"[^}]*\} [1-9]/,
      );
    });

    it('serves the dashboard at /', async () => {
      const res = await t.app.inject('/');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('/api/games');
    });
  });
});

describe('API while Postgres is unreachable', () => {
  let t: TestApi;
  beforeAll(async () => {
    // Port 1 on loopback: nothing listens, so every connection attempt is refused.
    t = await startTestApi(
      { DATABASE_URL: 'postgres://casino:casino@127.0.0.1:1/casino', RATE_LIMIT_MAX: 1000 },
      { migrated: false },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is alive but not ready', async () => {
    expect((await t.app.inject('/health')).statusCode).toBe(200);
    const ready = await t.app.inject('/ready');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ error: 'Service Unavailable', success: false });
    expect(ready.json().checks.database).not.toBe('ok');
  });

  it.each(['/api/games', '/api/latest/crash', '/api/history/crash?limit=5', '/api/history/type/multiplier'])(
    'answers %s with 503 and the error body',
    async (url) => {
      const res = await t.app.inject(url);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'Service Unavailable', success: false });
      expect(res.headers).toMatchObject(CORS);
    },
  );

  it('still rejects bad input with 400 before touching the database', async () => {
    const res = await t.app.inject('/api/history/crash?limit=0');
    expect(res.statusCode).toBe(400);
  });
});

describe('readiness with a database that does not answer in time', () => {
  it('fails /ready after the timeout', async () => {
    const t = await startTestApi({}, { readyTimeoutMs: 50 });
    try {
      // The test pool has 3 connections: three slow queries leave `select 1` queued.
      const slow = Array.from({ length: 3 }, () => t.sql`select pg_sleep(1)`.execute());
      const started = Date.now();
      const ready = await t.app.inject('/ready');
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.database).toBe('no answer within 50 ms');
      expect(Date.now() - started).toBeLessThan(900);
      await Promise.all(slow);
    } finally {
      await t.close();
    }
  });
});
