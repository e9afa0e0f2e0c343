import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../lib/logger.ts';
import { startTestGrpc, type TestGrpc } from '../../../../tests/support/grpc.ts';
import { until } from '../../../../tests/support/poll.ts';
import { deliveryOf, mkRound } from '../../../../tests/support/rounds-fixture.ts';
import { createGrpcProxyTransport } from './grpc-proxy.ts';
import { grpcProxyPlugin } from './plugin.ts';

let t: TestGrpc;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  t = await startTestGrpc();
  app = Fastify();
  await app.register(
    grpcProxyPlugin({
      grpcAddress: () => t.transport.address,
      logger: createLogger('t', 'silent'),
      heartbeatMs: 100,
    }),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});
afterEach(async () => {
  await until(() => t.hub.size === 0 && t.transport.openStreams === 0, 5000, 'gRPC streams closed');
});

interface SseEvent {
  event?: string;
  data?: string;
  comment?: string;
}

/** Opens an SSE response and parses its events as they come. */
async function openSse(path: string) {
  const ac = new AbortController();
  const res = await fetch(`${base}${path}`, { signal: ac.signal, headers: { accept: 'text/event-stream' } });
  const events: SseEvent[] = [];
  const pump = (async () => {
    if (!res.body || res.status !== 200) return;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      const reader = res.body.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        buf += decoder.decode(r.value, { stream: true });
        let i = buf.indexOf('\n\n');
        while (i >= 0) {
          const ev: SseEvent = {};
          for (const line of buf.slice(0, i).split('\n')) {
            if (line.startsWith(':')) ev.comment = line.slice(1).trim();
            else if (line.startsWith('event: ')) ev.event = line.slice(7);
            else if (line.startsWith('data: ')) ev.data = line.slice(6);
          }
          events.push(ev);
          buf = buf.slice(i + 2);
          i = buf.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  const messages = () => events.filter((e) => e.event === 'message').map((e) => e.data);
  return { res, events, messages, close: () => ac.abort(), pump };
}

let seq = 5000;
function publishMixed() {
  const vs = {
    crash: ['1.10', '4.00'],
    double: ['red', 'black'],
    slot: ['2.00'],
    'wall-street': ['up'],
  } as const;
  const out = Object.entries(vs).flatMap(([g, values]) =>
    values.map((v) => deliveryOf(mkRound(g as 'crash', seq++, v), seq)),
  );
  for (const d of out) t.hub.publish(d);
  return out;
}

describe('gRPC proxy: streams as SSE', () => {
  it('relays StreamByGame crash message for message, in the seed stream form', async () => {
    const s = await openSse('/grpc-proxy/stream/crash');
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toBe('text/event-stream');
    expect(s.res.headers.get('cache-control')).toBe('no-cache');
    expect(s.res.headers.get('access-control-allow-origin')).toBe('*');
    await until(() => t.transport.openStreams === 1, 5000, 'the real gRPC stream');
    const want = publishMixed().filter((d) => d.round.game_slug === 'crash');
    await until(() => s.messages().length >= want.length, 5000, 'messages');
    // Byte for byte the JSON the hub serialises for WebSocket and SSE.
    expect(s.messages()).toEqual(want.map((d) => d.streamJson({ kind: 'game', slug: 'crash' })));
    await until(() => s.events.some((e) => e.comment === 'heartbeat'), 2000, 'a heartbeat');
    s.close();
  });

  it('relays StreamByType multiplier and the filter query of StreamAll', async () => {
    const byType = await openSse('/grpc-proxy/stream/type/multiplier');
    const red = await openSse('/grpc-proxy/stream?colors=red');
    await until(() => t.transport.openStreams === 2, 5000, 'two gRPC streams');
    const published = publishMixed();
    const mult = published.filter((d) => ['crash', 'slot'].includes(d.round.game_slug));
    await until(
      () => byType.messages().length >= mult.length && red.messages().length >= 1,
      5000,
      'messages',
    );
    expect(byType.messages()).toEqual(mult.map((d) => d.streamJson({ kind: 'type', type: 'multiplier' })));
    const reds = published.filter((d) => d.round.result.game === 'double' && d.round.result.color === 'red');
    expect(red.messages()).toEqual(reds.map((d) => d.streamJson({ kind: 'all' })));
    byType.close();
    red.close();
  });

  it.each([
    ['/grpc-proxy/stream/poker', 404, 'Game not found'],
    ['/grpc-proxy/stream/type/dice', 404, 'Game type not found'],
    ['/grpc-proxy/stream/Not%20A%20Slug', 400, 'Invalid game slug'],
    ['/grpc-proxy/stream?min_point=abc', 400, 'min_point must be a finite number ≥ 0'],
    ['/grpc-proxy/stream/crash?colors=red', 400, undefined],
  ])('GET %s is refused with %i before streaming', async (path, code, error) => {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(code);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await res.json()) as { error: string; success: boolean };
    expect(body.success).toBe(false);
    if (error) expect(body.error).toBe(error);
  });

  it('cancels the gRPC call when the page disconnects', async () => {
    const s = await openSse('/grpc-proxy/stream/type/color');
    await until(() => t.transport.openStreams === 1 && t.hub.size === 1, 5000, 'the gRPC stream');
    s.close();
    await until(() => t.transport.openStreams === 0 && t.hub.size === 0, 5000, 'the gRPC stream cancelled');
  });
});

describe('gRPC proxy as an edge transport', () => {
  it('serves on the edge HTTP server and ends open relays when it stops', async () => {
    const http = Fastify();
    const proxy = createGrpcProxyTransport(t.transport);
    await proxy.start({ ...t.ctx, http });
    await http.listen({ host: '127.0.0.1', port: 0 });
    const port = (http.server.address() as { port: number }).port;
    const res = await fetch(`http://127.0.0.1:${port}/grpc-proxy/stream/slot`);
    expect(res.status).toBe(200);
    await until(() => t.transport.openStreams === 1, 5000, 'the gRPC stream');
    expect(
      (await t.metrics.subscribers.get()).values.find((v) => v.labels.protocol === 'grpc-proxy')?.value,
    ).toBe(1);
    await proxy.stop(0);
    const reader = res.body?.getReader();
    let done = false;
    while (!done) done = (await reader?.read())?.done ?? true; // the response ends
    await until(() => t.transport.openStreams === 0, 5000, 'the gRPC stream cancelled');
    expect(
      (await t.metrics.subscribers.get()).values.find((v) => v.labels.protocol === 'grpc-proxy')?.value,
    ).toBe(0);
    await http.close();
  });
});

describe('gRPC proxy: unary calls as JSON', () => {
  it('GET /grpc-proxy/games and /grpc-proxy/latest/:game', async () => {
    const d = deliveryOf(mkRound('double', 9000, 'white'));
    t.hub.publish(d);
    const games = (await (await fetch(`${base}/grpc-proxy/games`)).json()) as Record<string, unknown>[];
    expect(games.map((g) => g.slug)).toEqual(['crash', 'double', 'slot', 'wall-street']);
    expect(games[1]).toEqual({
      id: 2,
      slug: 'double',
      name: 'Double',
      type: 'color',
      last_round: d.round.round_id,
      last_update: new Date(d.round.finished_at).toISOString(),
    });
    const latest = await fetch(`${base}/grpc-proxy/latest/double`);
    expect(await latest.text()).toBe(d.streamJson({ kind: 'game', slug: 'double' }));
    const missing = await fetch(`${base}/grpc-proxy/latest/poker`);
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { error: 'Game not found', success: false },
    ]);
  });

  it('history: 400 for a bad limit, 502 when the server cannot answer (no database here)', async () => {
    const bad = await fetch(`${base}/grpc-proxy/history/crash?limit=2.5`);
    expect(bad.status).toBe(400);
    const noDb = await fetch(`${base}/grpc-proxy/history/type/multiplier?limit=10`);
    expect([noDb.status, await noDb.json()]).toEqual([
      502,
      { error: 'Bad Gateway (gRPC UNAVAILABLE)', success: false },
    ]);
  });

  it('answers 502 when the gRPC server is unreachable', async () => {
    const other = Fastify();
    await other.register(
      grpcProxyPlugin({ grpcAddress: '127.0.0.1:1', logger: createLogger('t', 'silent') }),
    );
    const res = await other.inject({ method: 'GET', url: '/grpc-proxy/games' });
    expect(res.statusCode).toBe(502);
    const stream = await other.inject({ method: 'GET', url: '/grpc-proxy/stream/crash' });
    expect([stream.statusCode, stream.json().success]).toEqual([502, false]);
    await other.close();
  });
});
