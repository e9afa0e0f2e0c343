/**
 * One error form everywhere (finding 6): every listener refuses a game slug
 * exactly as the API's `/api/latest/:game` does (status and text), on every protocol: the edge's
 * SSE, gRPC proxy, WebSocket and gRPC, the WebTransport route, and the gateway in front of the API;
 * errors fastify raises itself (a malformed percent-encoding) come in the same `{error,
 * success:false}` form (problem JSON on the session API) with the CORS headers. Real broker and
 * Postgres; every server on loopback with free ports.
 */
import { status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../lib/logger.ts';
import type { Edge } from '../../services/edge/edge.ts';
import { createDataStreamClient } from '../../services/edge/transports/grpc/proto.ts';
import { routeWebTransport } from '../../services/edge-webtransport/route.ts';
import { buildGateway, type Gateway } from '../../services/gateway/gateway.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { loadConfig } from '../support/config.ts';
import { createTestLog, startEdge, type TestLog } from '../support/edge.ts';
import { portsOf } from '../support/stream-clients.ts';

let api: TestApi;
let apiBase = '';
let log: TestLog;
let edge: Edge;
let gateway: Gateway;

beforeAll(async () => {
  api = await startTestApi();
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  apiBase = `http://127.0.0.1:${(api.app.server.address() as { port: number }).port}`;
  log = await createTestLog();
  edge = await startEdge(log, undefined, { requireGrpc: false });
  const ports = portsOf(edge);
  gateway = buildGateway({
    config: loadConfig(process.env, {
      GATEWAY_PORT: 0,
      GATEWAY_OPS_PORT: 0,
      GATEWAY_API_URL: apiBase,
      GATEWAY_EDGE_HTTP_URL: `http://127.0.0.1:${ports.http}`,
      GATEWAY_EDGE_WS_URL: `http://127.0.0.1:${ports.ws}`,
      GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:9',
    }),
    logger: createLogger('gateway-test', 'silent'),
  });
  await gateway.start();
});
afterAll(async () => {
  await gateway?.stop();
  await edge?.stop(0);
  await log?.close();
  await api?.close();
});

interface Refusal {
  readonly status: number;
  readonly error: string;
}

/** Slugs as they appear in a URL path. */
const SLUGS = [
  'poker',
  'CRASH',
  'a'.repeat(65),
  'a'.repeat(101),
  'b'.repeat(400),
  'cr%20ash',
  'a%2Fb',
  '%zz',
];

async function viaHttp(url: string): Promise<Refusal & { cors: string | null }> {
  const res = await fetch(url);
  const body = (await res.json()) as { error: string; success: boolean };
  expect(body.success).toBe(false);
  return { status: res.status, error: body.error, cors: res.headers.get('access-control-allow-origin') };
}

function viaWs(slug: string): Promise<Refusal & { cors: string | null }> {
  return new Promise((resolve, reject) => {
    const sock = new WebSocket(`ws://127.0.0.1:${portsOf(edge).ws}/ws/${slug}`);
    sock.once('open', () => reject(new Error(`WebSocket /ws/${slug} opened`)));
    sock.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => {
        const cors = res.headers['access-control-allow-origin'];
        resolve({
          status: res.statusCode ?? 0,
          error: JSON.parse(text).error,
          cors: (cors as string) ?? null,
        });
      });
    });
    sock.once('error', () => {});
  });
}

function viaGrpc(slug: string): Promise<Refusal> {
  const client = createDataStreamClient(`127.0.0.1:${portsOf(edge).grpc}`);
  const call = client.StreamByGame({ game_slug: slug });
  return new Promise((resolve) => {
    call.once('error', (e: ServiceError) => {
      client.close();
      const status =
        e.code === grpcStatus.INVALID_ARGUMENT ? 400 : e.code === grpcStatus.NOT_FOUND ? 404 : e.code;
      resolve({ status, error: e.details });
    });
  });
}

describe('a game slug is refused exactly as the API refuses it', () => {
  it.each(SLUGS.map((s) => [s.length > 40 ? `${s.slice(0, 12)}… (${s.length})` : s, s]))(
    '%s',
    async (_n, slug) => {
      const want = await viaHttp(`${apiBase}/api/latest/${slug}`);
      expect(want.status).toBeGreaterThanOrEqual(400);
      expect(want.status).toBeLessThan(500);
      expect(want.cors).toBe('*');
      const { http } = portsOf(edge);
      const edgeBase = `http://127.0.0.1:${http}`;
      for (const got of [
        await viaHttp(`${edgeBase}/sse/${slug}`),
        await viaHttp(`${edgeBase}/grpc-proxy/stream/${slug}`),
        await viaHttp(`${edgeBase}/grpc-proxy/latest/${slug}`),
        await viaWs(slug),
        await viaHttp(`http://127.0.0.1:${gateway.port}/api/latest/${slug}`),
        await viaHttp(`http://127.0.0.1:${gateway.port}/sse/${slug}`),
      ]) {
        expect(got).toEqual(want);
      }
      const wt = routeWebTransport(`/wt?game=${slug}`);
      expect(wt.ok ? undefined : { status: wt.status, error: wt.error }).toEqual({
        status: want.status,
        error: want.error,
      });
      // gRPC carries no URL: the decoded slug (a malformed encoding cannot be sent).
      if (slug !== '%zz') {
        expect(await viaGrpc(decodeURIComponent(slug))).toEqual({ status: want.status, error: want.error });
      }
    },
  );
});

describe('errors fastify raises itself', () => {
  it('a malformed URL on the session API is problem JSON, through the gateway the same as from the API', async () => {
    for (const base of [apiBase, `http://127.0.0.1:${gateway.port}`]) {
      const res = await fetch(`${base}/games/%zz`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toMatchObject({ status: 400, code: 'MALFORMED_URL', title: 'Bad Request' });
    }
  });

  it('the edge answers unknown paths and methods in the seed form with CORS', async () => {
    const { http } = portsOf(edge);
    for (const [path, method] of [
      ['/nope', 'GET'],
      ['/sse/crash', 'DELETE'],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${http}${path}`, { method });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) });
    }
  });
});
