/**
 * The gateway against small real upstreams on loopback (a fastify app per HTTP upstream and a
 * `ws` server for the WebSocket one): each route lands on its upstream, WebSocket upgrades keep
 * the upstream's status and subprotocol and its backpressure, SSE streams through unbuffered.
 */

import type * as Uws from 'uWebSockets.js';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { connect, createServer as createNetServer } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createLogger } from '../../lib/logger.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { samplesOf, sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort } from '../../tests/support/processes.ts';
import { buildGateway, type Gateway } from './gateway.ts';

const logger = createLogger('gateway-test', 'silent');
let api: FastifyInstance;
let edgeHttp: FastifyInstance;
let wtHttp: FastifyInstance;
let wsHttp: Server;
let wss: WebSocketServer;
let gateway: Gateway;
let base: string;
/** The SSE upstream's stream ends only when the test releases it. */
let releaseSse: () => void = () => {};
let sseEnded = false;
const upgrades: IncomingMessage[] = [];

const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;

async function echoApp(name: string, extend?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify();
  extend?.(app);
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.all('/*', async (req) => ({
    upstream: name,
    method: req.method,
    url: req.url,
    body: req.body ?? null,
    forwardedFor: req.headers['x-forwarded-for'] ?? null,
  }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

beforeAll(async () => {
  api = await echoApp('api');
  wtHttp = await echoApp('webtransport');
  edgeHttp = await echoApp('edge-http', (app) =>
    app.get('/sse/:game', (_req, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      reply.raw.write('event: initial\ndata: {"round_id":1}\n\n');
      new Promise<void>((r) => {
        releaseSse = r;
      }).then(() => {
        reply.raw.end('event: message\ndata: {"round_id":2}\n\n');
        sseEnded = true;
      });
    }),
  );

  // Like the edge: unknown games are refused with 404 before the upgrade; the subprotocol is echoed.
  wsHttp = createServer((_req, res) =>
    res.writeHead(426, { 'content-type': 'text/plain' }).end('Upgrade Required'),
  );
  wss = new WebSocketServer({
    server: wsHttp,
    handleProtocols: (protocols) => [...protocols][0] ?? false,
    verifyClient: (info, cb) => {
      upgrades.push(info.req);
      if (info.req.url === '/ws/crash' || info.req.url === '/ws/flood') cb(true);
      else cb(false, 404, 'Not Found');
    },
  });
  wss.on('connection', (ws, req) => {
    if (req.url === '/ws/flood') {
      const chunk = Buffer.alloc(1 << 20, 120);
      for (let i = 0; i < 64; i++) ws.send(chunk);
      return;
    }
    ws.send(JSON.stringify({ round_id: 7 }));
    ws.on('message', (m) => ws.send(`echo:${m.toString()}`));
  });
  wsHttp.listen(0, '127.0.0.1');
  await once(wsHttp, 'listening');

  const config = loadConfig(process.env, {
    GATEWAY_PORT: 0,
    GATEWAY_OPS_PORT: 0,
    GATEWAY_API_URL: `http://127.0.0.1:${portOf(api.server)}`,
    GATEWAY_EDGE_HTTP_URL: `http://127.0.0.1:${portOf(edgeHttp.server)}`,
    GATEWAY_EDGE_WS_URL: `http://127.0.0.1:${portOf(wsHttp)}`,
    GATEWAY_WT_HTTP_URL: `http://127.0.0.1:${portOf(wtHttp.server)}`,
  });
  gateway = buildGateway({ config, logger });
  await gateway.start();
  base = `http://127.0.0.1:${gateway.port}`;
});

afterAll(async () => {
  releaseSse();
  await gateway?.stop();
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  wsHttp?.close();
  await Promise.all([api?.close(), edgeHttp?.close(), wtHttp?.close()]);
});

const getJson = async (path: string, init?: RequestInit) => (await fetch(`${base}${path}`, init)).json();

describe('gateway routes', () => {
  it('answers its own /health, revealing no upstream address or socket path', async () => {
    const res = await fetch(`${base}/health`);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ status: 'ok' });
    expect(text).not.toMatch(/127\.0\.0\.1|:\d{2,5}|\.sock|upstream/);
  });

  it.each([
    ['/api/games', 'api', '/api/games'],
    ['/api/history/crash?limit=5', 'api', '/api/history/crash?limit=5'],
    ['/openapi.json', 'api', '/openapi.json'],
    ['/', 'api', '/'],
    ['/websocket.html', 'api', '/websocket.html'],
    ['/grpc-proxy/stream/crash?format=ndjson', 'edge-http', '/grpc-proxy/stream/crash?format=ndjson'],
    ['/sse/type/color', 'edge-http', '/sse/type/color'],
    ['/webtransport/cert-hash', 'webtransport', '/cert-hash'],
  ])('GET %s reaches %s as %s, with the client in X-Forwarded-For', async (path, upstream, url) => {
    expect(await getJson(path)).toMatchObject({ upstream, url, forwardedFor: '127.0.0.1' });
  });

  it('forwards methods and bodies', async () => {
    const body = await getJson('/api/auth/browser-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"visitor_id":"v","bound_domain":"d"}',
    });
    expect(body).toMatchObject({
      upstream: 'api',
      method: 'POST',
      body: { visitor_id: 'v', bound_domain: 'd' },
    });
  });

  it('passes a plain GET on /ws/* to the WebSocket upstream', async () => {
    const res = await fetch(`${base}/ws/crash`);
    expect(res.status).toBe(426);
    expect(await res.text()).toBe('Upgrade Required');
  });

  it('streams SSE: the first event arrives while the upstream response is still open', async () => {
    const res = await fetch(`${base}/sse/crash`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: initial');
    expect(sseEnded).toBe(false);
    releaseSse();
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain('event: message');
  });
});

describe('a body over the 1 MiB limit', () => {
  const big = 'x'.repeat((1 << 20) + 1);
  it.each([
    ['/api/auth/browser-key', { error: 'Request body is too large', success: false }],
    [
      '/admin/operators',
      { type: 'about:blank', title: 'Payload Too Large', status: 413, detail: 'Request body is too large' },
    ],
  ])(
    'POST %s: 413 in the form of the path, as the API answers it; not an upstream failure',
    async (path, body) => {
      const metrics = async () =>
        sampleValue(
          await (await fetch(`http://127.0.0.1:${gateway.opsPort}/metrics`)).text(),
          'gateway_upstream_failures_total',
          { status: '502' },
        ) ?? 0;
      const failuresBefore = await metrics();
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: big }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(body);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await metrics()).toBe(failuresBefore);
    },
  );

  it('a body of exactly 1 MiB still reaches the upstream', async () => {
    const payload = 'y'.repeat(1 << 20);
    const res = await fetch(`${base}/api/auth/browser-key`, { method: 'POST', body: payload });
    expect(res.status).toBe(200);
    expect((await res.json()).body).toHaveLength(1 << 20);
  });
});

describe('gateway with its upstreams down', () => {
  it('answers 502 in the REST error shape for HTTP and for WebSocket upgrades', async () => {
    const down = buildGateway({
      config: loadConfig(process.env, {
        GATEWAY_PORT: 0,
        GATEWAY_OPS_PORT: 0,
        GATEWAY_API_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_HTTP_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_WS_URL: 'http://127.0.0.1:1',
        GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:1',
      }),
      logger,
    });
    await down.start();
    try {
      for (const path of ['/api/games', '/sse/crash', '/webtransport/cert-hash']) {
        const res = await fetch(`http://127.0.0.1:${down.port}${path}`);
        expect(res.status, path).toBe(502);
        expect(await res.json()).toEqual({ error: 'Upstream unavailable', success: false });
      }
      const ws = new WebSocket(`ws://127.0.0.1:${down.port}/ws/crash`);
      ws.on('error', () => {});
      const [, res] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
      expect(res.statusCode).toBe(502);
      ws.terminate();

      // Live but not ready: the API upstream does not answer; the failures are counted.
      const ops = `http://127.0.0.1:${down.opsPort}`;
      expect((await fetch(`${ops}/health`)).status).toBe(200);
      const ready = await fetch(`${ops}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ready: false, listening: true });
      const text = await (await fetch(`${ops}/metrics`)).text();
      expect(sampleValue(text, 'gateway_upstream_failures_total', { status: '502' })).toBe(3);
    } finally {
      await down.stop();
    }
  });
});

describe('gateway beside upstreams that are still starting (npm start)', () => {
  it('logs an upstream that has not answered yet at info, and warns once it had answered', async () => {
    const lines: { level: number; msg: string; upstream?: string }[] = [];
    const captured = createLogger('gateway-test', 'info', {
      write: (l: string) => void lines.push(JSON.parse(l)),
    });
    const apiPort = await freePort();
    const gw = buildGateway({
      config: loadConfig(process.env, {
        GATEWAY_PORT: 0,
        GATEWAY_OPS_PORT: 0,
        GATEWAY_API_URL: `http://127.0.0.1:${apiPort}`,
        GATEWAY_EDGE_HTTP_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_WS_URL: 'http://127.0.0.1:1',
        GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:1',
      }),
      logger: captured,
    });
    await gw.start();
    const late = Fastify();
    late.get('/api/games', async () => []);
    try {
      const url = `http://127.0.0.1:${gw.port}/api/games`;
      expect((await fetch(url)).status).toBe(502);
      const failures = () => lines.filter((l) => l.msg.startsWith('upstream'));
      expect(failures().map((l) => [l.level, l.upstream])).toEqual([[30, 'api']]);

      await late.listen({ host: '127.0.0.1', port: apiPort });
      expect((await fetch(url)).status).toBe(200);
      await late.close();
      expect((await fetch(url)).status).toBe(502);
      expect(failures().map((l) => [l.level, l.msg])).toEqual([
        [30, 'upstream not answering yet (still starting)'],
        [40, 'upstream failed'],
      ]);
    } finally {
      await late.close();
      await gw.stop();
    }
  });
});

describe('gateway ops endpoints (GATEWAY_OPS_PORT)', () => {
  it('answers /health, /ready with its upstreams, and /metrics with proxied request durations', async () => {
    const ops = `http://127.0.0.1:${gateway.opsPort}`;
    expect(gateway.opsPort).not.toBe(gateway.port);
    expect((await fetch(`${ops}/health`)).status).toBe(200);
    const ready = await fetch(`${ops}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      listening: true,
      upstreams: { api: 'ok', edgeHttp: 'ok', wtHttp: 'ok' },
    });
    // /metrics on the proxy port is the API's, not the gateway's own.
    expect(await getJson('/metrics')).toMatchObject({ upstream: 'api', url: '/metrics' });

    await fetch(`${base}/api/games`);
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws/crash`);
    await once(ws, 'open');
    const text = await (await fetch(`${ops}/metrics`)).text();
    expect(sampleValue(text, 'gateway_ws_tunnels', { service: 'gateway' })).toBeGreaterThanOrEqual(1);
    ws.terminate();
    const proxied = samplesOf(text, 'http_request_duration_seconds_count', {
      method: 'GET',
      service: 'gateway',
    });
    expect(proxied.reduce((n, x) => n + x.value, 0)).toBeGreaterThan(0);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'gateway' })).toBeGreaterThan(0);
  });
});

describe('gateway WebSocket tunnel', () => {
  it('upgrades through to the upstream, echoing the subprotocol, both ways', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws/crash`, ['tok_abc']);
    const first = await new Promise<string>((resolve, reject) => {
      ws.once('message', (m) => resolve(m.toString()));
      ws.once('error', reject);
    });
    expect(ws.protocol).toBe('tok_abc');
    expect(JSON.parse(first)).toEqual({ round_id: 7 });
    ws.send('hi');
    const [echo] = await once(ws, 'message');
    expect(String(echo)).toBe('echo:hi');
    expect(upgrades.at(-1)?.headers['x-forwarded-for']).toBe('127.0.0.1');
    ws.close(1000);
    const [code] = await once(ws, 'close');
    expect(code).toBe(1000);
  });

  it("keeps the upstream's refusal before the upgrade (404), and refuses other paths itself", async () => {
    for (const path of ['/ws/poker', '/api/games']) {
      const ws = new WebSocket(`${base.replace('http', 'ws')}${path}`);
      ws.on('error', () => {}); // the refusal also surfaces as an error event
      const [, res] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
      expect(res.statusCode).toBe(404);
      ws.terminate();
    }
  });

  it('closes a connection whose upgrade the upstream refused: a pipelined request never reaches it', async () => {
    // The edge's WebSocket server is uWebSockets.js, which keeps the connection after refusing an
    // upgrade (HTTP/1.1 keep-alive); a request sent after the refusal on the same socket would be
    // read by it as a request of its own.
    const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof Uws;
    const seen: string[] = [];
    const app = uws.App();
    app.ws('/ws/*', {
      upgrade: (res, req) => {
        seen.push(`upgrade ${req.getUrl()}`);
        res.cork(() => {
          res.writeStatus('401 Unauthorized').writeHeader('Content-Type', 'application/json');
          res.end('{"error":"Unauthorized","success":false,"reason":"unknown"}');
        });
      },
    });
    app.any('/*', (res, req) => {
      seen.push(`${req.getMethod()} ${req.getUrl()}`);
      res.end('reached the edge');
    });
    const port = await new Promise<number>((resolve, reject) =>
      app.listen('127.0.0.1', 0, (token) =>
        token ? resolve(uws.us_socket_local_port(token)) : reject(new Error('uWS did not listen')),
      ),
    );
    const gw = buildGateway({
      config: loadConfig(process.env, {
        GATEWAY_PORT: 0,
        GATEWAY_OPS_PORT: 0,
        GATEWAY_API_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_HTTP_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_WS_URL: `http://127.0.0.1:${port}`,
        GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:1',
      }),
      logger,
    });
    await gw.start();
    try {
      const upgrade =
        'GET /ws/crash HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Protocol: sk_live_wrong\r\n\r\n';
      const second = 'GET /ws/pipelined HTTP/1.1\r\nHost: x\r\n\r\n';
      for (const writes of [[upgrade + second], [upgrade, second]]) {
        const socket = connect(gw.port, '127.0.0.1');
        await once(socket, 'connect');
        let received = '';
        socket.on('data', (d) => {
          received += d.toString('latin1');
        });
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        socket.on('error', () => {});
        socket.write(writes[0] as string);
        if (writes[1]) {
          await waitFor(
            'the refusal',
            async () => (received.includes('Unauthorized') ? true : undefined),
            5000,
          );
          socket.write(writes[1]);
        }
        const outcome = await Promise.race([
          closed.then(() => 'closed'),
          new Promise((r) => setTimeout(() => r('still open'), 3000)),
        ]);
        expect(received).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
        expect(received.match(/HTTP\/1\.1/g)).toHaveLength(1);
        expect(outcome).toBe('closed');
        socket.destroy();
      }
      expect(seen).toEqual(['upgrade /ws/crash', 'upgrade /ws/crash']);
    } finally {
      await gw.stop();
      app.close();
    }
  });

  it('answers 502 and closes when the upstream ends the connection without answering the upgrade', async () => {
    const mute = createNetServer((c) => c.once('data', () => c.end()));
    mute.listen(0, '127.0.0.1');
    await once(mute, 'listening');
    const gw = buildGateway({
      config: loadConfig(process.env, {
        GATEWAY_PORT: 0,
        GATEWAY_OPS_PORT: 0,
        GATEWAY_API_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_HTTP_URL: 'http://127.0.0.1:1',
        GATEWAY_EDGE_WS_URL: `http://127.0.0.1:${portOf(mute)}`,
        GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:1',
      }),
      logger,
    });
    await gw.start();
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/ws/crash`);
      ws.on('error', () => {});
      const [, res] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
      expect(res.statusCode).toBe(502);
      ws.terminate();
    } finally {
      await gw.stop();
      mute.close();
    }
  });

  it("leaves a client that never reads to the upstream's backpressure instead of buffering it", async () => {
    const socket = connect(gateway.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      'GET /ws/flood HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    socket.pause();
    await new Promise((r) => setTimeout(r, 1500));
    const flood = [...wss.clients].find((c) => c.bufferedAmount > 0);
    // 64 MiB were sent; socket buffers on the way hold a few MiB, the rest waits at the upstream.
    expect(flood?.bufferedAmount ?? 0).toBeGreaterThan(32 << 20);
    expect(gateway.tunnel.open).toBeGreaterThanOrEqual(1);
    socket.destroy();
    flood?.terminate();
  });
});
