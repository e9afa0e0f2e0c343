/**
 * Credentials on every stream protocol of the edge (docs/contract.md
 * "Authentication"), against the real broker: keys are appended to the namespace's `auth-keys`
 * topic and read by each edge's own key table. Edge `on` requires credentials on WebSocket, SSE
 * and gRPC; edge `off` requires none (a credential that is present is still checked).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.ts';
import { type AuthTestApi, startAuthTestApi } from '../../tests/support/auth.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { type TestKey, testKey } from '../../tests/support/credentials.ts';
import {
  createTestLog,
  metricValue,
  round,
  startEdge,
  type TestLog,
  untilKey,
} from '../../tests/support/edge.ts';
import { until } from '../../tests/support/poll.ts';
import {
  type AttemptOptions,
  attempt,
  type EdgePorts,
  type StreamProto,
} from '../../tests/support/stream-clients.ts';
import { buildEdge, type Edge } from './edge.ts';

const ORIGIN = 'https://casino.example';
const PROTOS: StreamProto[] = ['ws', 'sse', 'grpc', 'grpc-proxy'];

describe('stream credentials (real broker)', () => {
  let log: TestLog;
  let on: Edge;
  let off: Edge;
  const all = testKey({ scopes: ['stream:*'] });
  const one = testKey({ scopes: ['stream:game'] });
  const pub = testKey({ scopes: ['stream:*'], origins: [ORIGIN] });
  const revoked = testKey({ scopes: ['stream:*'] });
  const limited = testKey({ scopes: ['stream:*'], rateLimit: 2 });
  const token = (k: TestKey) => k.token(log.tokenSecret);

  beforeAll(async () => {
    log = await createTestLog();
    for (const k of [all, one, pub, revoked, limited])
      await log.appendKey({ type: 'KeyCreated', value: k.event });
    await log.appendKey({ type: 'KeyRevoked', value: { key_id: revoked.keyId, at: Date.now() } });
    [on, off] = await Promise.all([
      startEdge(log, undefined, { requireWs: true, requireSse: true, requireGrpc: true }),
      startEdge(log, undefined, { requireWs: false, requireSse: false, requireGrpc: false }),
    ]);
    for (const e of [on, off]) await untilKey(e, revoked.keyId, 'revoked');
  }, 60_000);
  afterAll(async () => {
    await Promise.all([on?.stop(0), off?.stop(0)]);
    await log?.close();
  });

  type Row = [string, () => Edge, () => AttemptOptions, number];
  const rows: Row[] = [
    ['missing credential, switch on', () => on, () => ({ path: 'crash' }), 401],
    ['missing credential, switch off', () => off, () => ({ path: 'crash' }), 200],
    ['malformed credential, switch off', () => off, () => ({ path: 'crash', credential: 'tok_00ff' }), 401],
    [
      'unknown key, switch off',
      () => off,
      () => ({ path: 'crash', credential: `sk_live_${'7'.repeat(64)}` }),
      401,
    ],
    [
      'expired token',
      () => on,
      () => ({ path: 'crash', credential: all.token(log.tokenSecret, Date.now() - 16_000) }),
      401,
    ],
    ['revoked key token', () => on, () => ({ path: 'crash', credential: token(revoked) }), 401],
    [
      'stream:game token on a type',
      () => on,
      () => ({ path: 'type/multiplier', credential: token(one) }),
      403,
    ],
    ['stream:game token on a game', () => on, () => ({ path: 'crash', credential: token(one) }), 200],
    ['private key in a header', () => on, () => ({ path: 'type/color', credential: all.secret }), 200],
    [
      'token as query / bearer',
      () => on,
      () => ({ path: 'crash', credential: token(all), via: 'query' }),
      200,
    ],
    [
      'public key, wrong Origin',
      () => on,
      () => ({ path: 'crash', credential: pub.secret, origin: 'https://evil.example' }),
      401,
    ],
    ['public key, no Origin', () => on, () => ({ path: 'crash', credential: token(pub) }), 401],
    [
      'public token, right Origin',
      () => on,
      () => ({ path: 'crash', credential: token(pub), origin: ORIGIN }),
      200,
    ],
    [
      'public token, wrong Origin, right Referer',
      () => on,
      () => ({
        path: 'crash',
        credential: token(pub),
        origin: 'https://evil.example',
        referer: `${ORIGIN}/p`,
      }),
      401,
    ],
  ];
  const table = PROTOS.flatMap((p) => rows.map((r) => [p, ...r] as const));

  it.each(table)('%s: %s → %i', async (proto, _name, edge, opts, want) => {
    const o = opts();
    // WebSocket sends the credential only as the subprotocol; gRPC's "query" form is `authorization`.
    const via = proto === 'grpc' && o.via === 'query' ? 'bearer' : o.via;
    const a = await attempt(edge(), proto, { ...o, ...(via ? { via } : {}) });
    a.close();
    expect(a.status).toBe(want);
  });

  // A credential far beyond any real one is refused before any stream opens: by the credential
  // check (401 malformed) where the transport takes a 64 KiB header (HTTP/2), by the 16 KiB HTTP/1
  // header limit (431) on WebSocket (uws.ts MAX_HEADERS_BYTES), SSE and the gRPC proxy (Node's).
  // Each answer is pinned.
  it.each([
    ['ws', 4 * 1024, 401],
    ['ws', 64 * 1024, 431],
    ['sse', 4 * 1024, 401],
    ['sse', 64 * 1024, 431],
    ['grpc', 4 * 1024, 401],
    ['grpc', 64 * 1024, 401],
    ['grpc-proxy', 4 * 1024, 401],
    ['grpc-proxy', 64 * 1024, 431],
  ] as const)('%s: a %i-byte credential → %i, no stream', async (proto, size, want) => {
    const a = await attempt(on, proto, { path: 'crash', credential: `tok_${'a'.repeat(size)}` });
    a.close();
    expect(a.status).toBe(want);
  });

  it.each(['sse', 'grpc-proxy'] as const)(
    '%s: a same-origin page (Referer, no Origin) may use a public token',
    async (proto) => {
      const a = await attempt(on, proto, {
        path: 'crash',
        credential: token(pub),
        via: 'query',
        referer: `${ORIGIN}/sse.html`,
      });
      a.close();
      expect(a.status).toBe(200);
    },
  );

  it.each(PROTOS)('%s: a valid token streams rounds', async (proto) => {
    const a = await attempt(on, proto, { path: 'double', credential: token(all), origin: ORIGIN });
    expect(a.status).toBe(200);
    const r = round('double', Date.now() % 1_000_000);
    await log.append([r]);
    await until(() => a.received.some((m) => m.includes(String(r.round_id))), 10_000, `${proto} round`);
    a.close();
  });

  it('limits connection attempts per key (rate_limit a minute) on every protocol: 429', async () => {
    const statuses: number[] = [];
    for (const proto of PROTOS) {
      const a = await attempt(on, proto, { path: 'crash', credential: token(limited) });
      a.close();
      statuses.push(a.status);
    }
    // rate_limit 2: the first two attempts pass, the rest are refused; the proxy's call counts too.
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('closes open streams of a key when it is revoked, and refuses its new ones', async () => {
    const victim = testKey({ scopes: ['stream:*'] });
    await log.appendKey({ type: 'KeyCreated', value: victim.event });
    await untilKey(on, victim.keyId, 'live');
    const open = await Promise.all(
      PROTOS.map((p) => attempt(on, p, { path: 'crash', credential: token(victim) })),
    );
    expect(open.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    await log.appendKey({ type: 'KeyRevoked', value: { key_id: victim.keyId, at: Date.now() } });
    const onLog = Date.now(); // within a second of the revocation being on the log
    const ends = await Promise.all(open.map((a) => a.ended));
    expect(Date.now() - onLog).toBeLessThan(1_000);
    expect(ends[0]).toBe(1008); // WebSocket policy close
    expect(ends[2]).toBe('UNAUTHENTICATED');
    for (const protocol of ['ws', 'sse', 'grpc']) {
      expect(await metricValue(on, 'edge_revoked_closes_total', { protocol })).toBeGreaterThanOrEqual(1);
    }
    expect(
      await metricValue(on, 'edge_auth_refusals_total', { protocol: 'ws', reason: 'missing' }),
    ).toBeGreaterThan(0);
    expect(
      await metricValue(on, 'edge_auth_refusals_total', { protocol: 'grpc', reason: 'scope' }),
    ).toBeGreaterThan(0);
    for (const p of PROTOS)
      expect((await attempt(on, p, { path: 'crash', credential: victim.secret })).status).toBe(401);
  });
});

/**
 * The failed-credential budget on the streams (lib/auth/failure-budget.ts): the API's rule
 * (RATE_LIMIT_AUTH_FAILURES 401s per client IP a window, then 429 for any credential from it, a
 * valid one included), on every protocol, in one budget per IP across protocols, edges and the API.
 * Clients are named by X-Forwarded-For, which the edges believe from loopback (EDGE_TRUST_PROXY).
 */
describe('failed-credential budget on the streams (RATE_LIMIT_AUTH_FAILURES 3)', () => {
  const MAX = 3;
  let log: TestLog;
  let edge: Edge;
  const good = testKey({ scopes: ['stream:*'] });
  let n = 0;
  /** A fresh documentation-range address per call (RFC 5737), so cases do not share budgets. */
  const nextIp = () => `203.0.113.${++n}`;
  const wrong = () => `sk_live_${randomBytes(32).toString('hex')}`;

  beforeAll(async () => {
    log = await createTestLog({ RATE_LIMIT_AUTH_FAILURES: MAX });
    await log.appendKey({ type: 'KeyCreated', value: good.event });
    edge = await startEdge(log, undefined, { requireWs: true, requireSse: true, requireGrpc: true });
    await untilKey(edge, good.keyId, 'live');
  }, 60_000);
  afterAll(async () => {
    await edge?.stop(0);
    await log?.close();
  });

  const statusOf = async (target: Edge | EdgePorts, proto: StreamProto, o: Omit<AttemptOptions, 'path'>) => {
    const a = await attempt(target, proto, { ...o, path: 'crash' });
    a.close();
    return a.status;
  };

  it.each(PROTOS)(
    '%s: 10 wrong keys in a row are 401 until the budget is spent, then 429; then even a valid key; another IP is not affected',
    async (proto) => {
      const ip = nextIp();
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++)
        statuses.push(await statusOf(edge, proto, { credential: wrong(), forwardedFor: ip }));
      expect(statuses).toEqual([...Array(MAX).fill(401), ...Array(10 - MAX).fill(429)]);
      expect(await statusOf(edge, proto, { credential: good.secret, forwardedFor: ip })).toBe(429);
      expect(await statusOf(edge, proto, { credential: good.secret, forwardedFor: nextIp() })).toBe(200);
    },
  );

  it('past the budget: Retry-After on SSE, RESOURCE_EXHAUSTED naming it on gRPC, counted as rate_limited', async () => {
    const ip = nextIp();
    for (let i = 0; i < MAX; i++) await statusOf(edge, 'sse', { credential: wrong(), forwardedFor: ip });
    const res = await fetch(`http://127.0.0.1:${edge.httpPort}/sse/crash`, {
      headers: { 'x-api-key': good.secret, 'x-forwarded-for': ip },
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toEqual({
      error: 'Too many requests, please slow down',
      success: false,
      reason: 'rate_limited',
    });
    const a = await attempt(edge, 'grpc', { path: 'crash', credential: good.secret, forwardedFor: ip });
    expect(a.status).toBe(429);
    expect(await a.ended).toBe('RESOURCE_EXHAUSTED');
    expect(
      await metricValue(edge, 'edge_auth_refusals_total', { protocol: 'sse', reason: 'rate_limited' }),
    ).toBeGreaterThan(0);
  });

  it('one budget per IP across the protocols: failures on SSE and gRPC refuse a WebSocket', async () => {
    const ip = nextIp();
    expect(await statusOf(edge, 'sse', { credential: wrong(), forwardedFor: ip })).toBe(401);
    expect(await statusOf(edge, 'grpc', { credential: wrong(), forwardedFor: ip })).toBe(401);
    expect(await statusOf(edge, 'grpc-proxy', { credential: wrong(), forwardedFor: ip })).toBe(401);
    expect(await statusOf(edge, 'ws', { credential: good.secret, forwardedFor: ip })).toBe(429);
  });

  it('a request without a credential is not refused past the budget (it spends, as on the API)', async () => {
    const ip = nextIp();
    for (let i = 0; i < MAX; i++) await statusOf(edge, 'sse', { credential: wrong(), forwardedFor: ip });
    // AUTH_REQUIRE_SSE is on here: no credential is a 401 of its own, not a 429.
    expect(await statusOf(edge, 'sse', { forwardedFor: ip })).toBe(401);
  });

  it('with EDGE_TRUST_PROXY=none a spoofed X-Forwarded-For does not change the identity', async () => {
    const strict = buildEdge({
      config: { ...log.config, edge: { ...log.config.edge, trustProxy: [] } },
      logger: createLogger('edge-test', 'silent'),
    });
    await strict.start();
    try {
      await until(() => strict.source.ready, 20_000, 'edge source ready');
      for (const proto of ['sse', 'ws'] as const) {
        const statuses: number[] = [];
        for (let i = 0; i <= MAX; i++)
          statuses.push(await statusOf(strict, proto, { credential: wrong(), forwardedFor: nextIp() }));
        // The budget of 127.0.0.1 (the peer): SSE spends it, and WebSocket meets it spent.
        expect(statuses.at(-1), proto).toBe(429);
      }
    } finally {
      await strict.stop(0);
    }
  });
});

describe('one failed-credential budget for the API and the edges (shared Redis, RATE_LIMIT_REDIS_URL)', () => {
  const MAX = 3;
  const REDIS = loadConfig(process.env).api.rateLimitRedisUrl || 'redis://127.0.0.1:56379';
  let log: TestLog;
  let api: AuthTestApi;
  const edges: Edge[] = [];
  const good = testKey({ scopes: ['stream:*'] });
  let n = 0;
  const nextIp = () => `198.18.0.${++n}`;
  const wrong = () => `sk_live_${randomBytes(32).toString('hex')}`;

  beforeAll(async () => {
    const shared = { RATE_LIMIT_AUTH_FAILURES: MAX, RATE_LIMIT_REDIS_URL: REDIS };
    log = await createTestLog(shared);
    await log.appendKey({ type: 'KeyCreated', value: good.event });
    api = await startAuthTestApi({ ...shared, TOPIC_NAMESPACE: log.config.kafka.topicNamespace });
    // Two edges: two processes' worth of in-memory counters, which only Redis can join.
    for (let i = 0; i < 2; i++) edges.push(await startEdge(log, undefined, { requireSse: true }));
    for (const e of edges) await untilKey(e, good.keyId, 'live');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(edges.map((e) => e.stop(0)));
    await api?.close();
    await log?.close();
  });

  const sse = async (e: Edge, credential: string, ip: string) => {
    const a = await attempt(e, 'sse', { path: 'crash', credential, forwardedFor: ip });
    a.close();
    return a.status;
  };

  it('failures on the API refuse that IP on the edges, a valid key included', async () => {
    const ip = nextIp();
    for (let i = 0; i < MAX; i++) {
      const res = await api.app.inject({
        url: '/api/games',
        remoteAddress: ip,
        headers: { 'x-api-key': wrong() },
      });
      expect(res.statusCode).toBe(401);
    }
    for (const e of edges) expect(await sse(e, good.secret, ip)).toBe(429);
    expect(await sse(edges[0] as Edge, good.secret, nextIp())).toBe(200);
  });

  it('failures spread over two edges add up, and the API refuses that IP too', async () => {
    const ip = nextIp();
    expect(await sse(edges[0] as Edge, wrong(), ip)).toBe(401);
    expect(await sse(edges[1] as Edge, wrong(), ip)).toBe(401);
    expect(await sse(edges[0] as Edge, wrong(), ip)).toBe(401);
    expect(await sse(edges[1] as Edge, good.secret, ip)).toBe(429);
    const res = await api.app.inject({
      url: '/api/auth/keys',
      remoteAddress: ip,
      headers: { 'x-api-key': api.adminKey },
    });
    expect(res.statusCode).toBe(429);
  });
});
