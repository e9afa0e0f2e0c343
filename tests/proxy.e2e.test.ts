/**
 * The compose deployment's front door: ops/nginx/casino.conf.template run by a
 * local nginx in front of the real API, two real edge processes and the Deno WebTransport edge.
 * Every path of the seed answers from the one origin, gRPC is balanced on its own port, streams
 * spread over both edges, and when one edge drains (SIGTERM) its SSE clients resume through the
 * proxy on the other with no round missed or doubled. Also checks that the compose `proxy`
 * service sets exactly the settings the template uses.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { createSql } from '../lib/db/pool.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../lib/log/topics.ts';
import type { GameSlug } from '../rules/games/catalog.ts';
import type { RoundFinished, StreamRound } from '../rules/rounds/round.ts';
import { createDataStreamClient } from '../services/edge/transports/grpc/proto.ts';
import { createTestLog, round, type TestLog } from './support/edge.ts';
import { track } from './support/grpc.ts';
import { sampleValue } from './support/metrics.ts';
import {
  type LocalNginx,
  NGINX_BIN,
  PROXY_TEMPLATE,
  startNginx,
  templateVariables,
} from './support/nginx.ts';
import { until, waitFor } from './support/poll.ts';
import {
  devCertDir,
  freePort,
  ROOT,
  type Service,
  startService,
  startWebTransportEdge,
  uniqueId,
  waitReady,
} from './support/processes.ts';
import { openSse, type SseClient } from './support/sse-client.ts';
import { attempt, type StreamProto } from './support/stream-clients.ts';

/**
 * The proxy's fixed address (compose: its `ipv4_address`), a loopback address of its own here, so
 * that the edges trust it alone (EDGE_TRUST_PROXY) and not the test's clients on other loopback
 * addresses; on Linux all of 127.0.0.0/8 is this host's.
 */
const PROXY_ADDRESS = '127.0.0.2';
/** Wrong credentials a client may present in a window (RATE_LIMIT_AUTH_FAILURES) before its 429s. */
const AUTH_FAILURES = 5;

interface EdgeProc {
  svc: Service;
  readonly http: number;
  readonly ws: number;
  readonly grpc: number;
  readonly env: Record<string, string>;
}

/** `edge_subscribers{protocol}` scraped from an edge's /metrics (0 when absent). */
async function subscribers(edge: EdgeProc, protocol: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${edge.http}/metrics`)).text();
  return sampleValue(text, 'edge_subscribers', { protocol }) ?? 0;
}

const messageIds = (c: SseClient): number[] =>
  c
    .named()
    .filter((e) => e.event === 'message')
    .map((e) => (JSON.parse(e.data as string) as StreamRound).round_id);

describe.runIf(existsSync(NGINX_BIN))('compose proxy (nginx) in front of two edges', () => {
  let log: TestLog;
  let nginx: LocalNginx;
  let api: Service;
  let apiSocket = '';
  let wt: Service;
  const edges: EdgeProc[] = [];
  const schema = uniqueId('e2e_proxy_');
  let certDir: string | undefined;
  let proxyHttp = 0;
  let proxyGrpc = 0;
  let seq = 0;
  const next = (slug: GameSlug): RoundFinished => round(slug, ++seq);

  beforeAll(async () => {
    const ns = `${uniqueId('e2e-proxy-')}-`;
    log = await createTestLog({ TOPIC_NAMESPACE: ns, DATABASE_SCHEMA: schema });
    const admin = log.kafka.admin();
    await admin.connect();
    await ensureTopics(admin, log.config);
    await admin.disconnect();
    certDir = devCertDir('proxy-e2e-cert-');
    const common = {
      TOPIC_NAMESPACE: ns,
      DATABASE_SCHEMA: schema,
      AUTH_TOKEN_SECRET: log.config.auth.tokenSecret,
      AUTH_REQUIRE_GRPC: 'false',
      EDGE_DRAIN_MS: '300',
    };
    const apiPort = await freePort();
    // nginx reaches the API on its proxy socket, as in docker-compose.yml.
    apiSocket = join(certDir, 'api.sock');
    api = startService('services/api/main.ts', {
      ...common,
      API_PORT: String(apiPort),
      API_SOCKET: apiSocket,
      RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
    });
    for (let i = 0; i < 2; i++) {
      const [http, ws, grpc] = [await freePort(), await freePort(), await freePort()];
      const env = {
        ...common,
        EDGE_HTTP_PORT: String(http),
        EDGE_WS_PORT: String(ws),
        GRPC_PORT: String(grpc),
        // As docker-compose.yml: nginx's address and loopback (where only the edge's own gRPC proxy
        // dials its gRPC listener) are believed, not the test's clients on 127.0.0.3 and up. One
        // failed-credential budget for both edges (shared Redis): round robin does not split a count.
        EDGE_TRUST_PROXY: `127.0.0.1,::1,${PROXY_ADDRESS}`,
        RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
        RATE_LIMIT_REDIS_URL: process.env.RATE_LIMIT_REDIS_URL ?? 'redis://127.0.0.1:56379',
      };
      edges.push({ svc: startService('services/edge/main.ts', env), http, ws, grpc, env });
    }
    const [wtPort, wtHttp] = [await freePort(), await freePort()];
    wt = startWebTransportEdge({
      ...common,
      WT_PORT: String(wtPort),
      WT_HTTP_PORT: String(wtHttp),
      WT_DEV_CERT_DIR: certDir,
    });
    // Bounds for a loaded CI machine (an edge's first consumer group forms on a broker other files
    // have just used); a failure shows the service's own output, which says where its start stood.
    const ready = (url: string, svc: Service) =>
      waitReady(url, 120_000).catch((err) => {
        throw new Error(`${(err as Error).message}\n${svc.output().slice(-4000)}`);
      });
    await ready(`http://127.0.0.1:${apiPort}/ready`, api);
    for (const e of edges) await ready(`http://127.0.0.1:${e.http}/ready`, e.svc);
    await ready(`http://127.0.0.1:${wtHttp}/ready`, wt);
    [proxyHttp, proxyGrpc] = [await freePort(), await freePort()];
    const [a, b] = edges as [EdgeProc, EdgeProc];
    nginx = startNginx({
      PROXY_HTTP_PORT: `127.0.0.1:${proxyHttp}`,
      PROXY_GRPC_PORT: `127.0.0.1:${proxyGrpc}`,
      API_UPSTREAM: `unix:${apiSocket}`,
      EDGE_A_HTTP: `127.0.0.1:${a.http}`,
      EDGE_A_WS: `127.0.0.1:${a.ws}`,
      EDGE_A_GRPC: `127.0.0.1:${a.grpc}`,
      EDGE_B_HTTP: `127.0.0.1:${b.http}`,
      EDGE_B_WS: `127.0.0.1:${b.ws}`,
      EDGE_B_GRPC: `127.0.0.1:${b.grpc}`,
      WT_HTTP_UPSTREAM: `127.0.0.1:${wtHttp}`,
      PROXY_ADDRESS,
    });
    await waitReady(`http://127.0.0.1:${proxyHttp}/proxy-health`, 10_000);
  }, 420_000);

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([api, wt, ...edges.map((e) => e.svc)].map((s) => s?.stop('SIGKILL')));
    const sql = createSql(log.config, { max: 1 });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
    await sql.end();
    const admin = log.kafka.admin();
    await admin.connect();
    const topics = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(log.config, k));
    await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
    await log?.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  }, 60_000);

  it('the compose proxy service sets exactly the settings the template uses', () => {
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    const env = Object.keys(compose.services.proxy.environment).sort();
    expect(env).toEqual(templateVariables(readFileSync(PROXY_TEMPLATE, 'utf8')).sort());
  });

  it('serves REST, WebSocket, SSE, gRPC and the certificate hash from one origin', async () => {
    const base = `http://127.0.0.1:${proxyHttp}`;
    const games = (await (await fetch(`${base}/api/games`)).json()) as { slug: string }[];
    expect(games.map((g) => g.slug)).toEqual(['crash', 'double', 'slot', 'wall-street']);
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
    const hash = (await (await fetch(`${base}/webtransport/cert-hash`)).json()) as Record<string, unknown>;
    expect(JSON.stringify(hash)).toMatch(/[0-9a-f]{64}|[A-Za-z0-9+/]{43}=/);

    const ws = new WebSocket(`ws://127.0.0.1:${proxyHttp}/ws/crash`);
    const wsGot: StreamRound[] = [];
    ws.on('message', (d) => wsGot.push(JSON.parse(d.toString()) as StreamRound));
    await new Promise((res, rej) => {
      ws.once('open', res);
      ws.once('error', rej);
    });
    const sse = await openSse(proxyHttp, '/sse/crash');
    expect(sse.res.headers['content-type']).toMatch(/^text\/event-stream/);
    const grpc = createDataStreamClient(`127.0.0.1:${proxyGrpc}`);
    const stream = track(grpc.StreamByGame({ game_slug: 'crash' }));
    await stream.started;

    const r = next('crash');
    await log.append([r]);
    await until(() => wsGot.length >= 1 && messageIds(sse).includes(r.round_id), 15_000, 'WebSocket and SSE');
    const got = await stream.waitFor(1);
    expect(got[0]?.round_id).toBe(r.round_id);
    expect(wsGot[0]?.round_id).toBe(r.round_id);
    ws.close();
    sse.close();
    stream.call.cancel();
    grpc.close();
  });

  it("each browser behind the proxy spends its own failed-credential budget; a forged X-Forwarded-For spends its sender's", async () => {
    const proxy = { http: proxyHttp, ws: proxyHttp, grpc: proxyGrpc };
    const wrong = () => `sk_live_${randomBytes(32).toString('hex')}`;
    const status = async (proto: StreamProto, o: { localAddress?: string; forwardedFor?: string }) => {
      const a = await attempt(proxy, proto, { path: 'crash', credential: wrong(), ...o });
      a.close();
      return a.status;
    };
    // Browser A names browser B in its own X-Forwarded-For: nginx appends A's address, the edges
    // believe only nginx's hop, so A's wrong keys spend A's budget, over SSE and the gRPC proxy alike.
    const [A, B] = ['127.0.0.3', '127.0.0.4'];
    const seen: number[] = [];
    for (let i = 0; i < AUTH_FAILURES + 2; i++)
      seen.push(await status(i % 2 ? 'grpc-proxy' : 'sse', { localAddress: A, forwardedFor: B }));
    expect(seen).toEqual([...Array(AUTH_FAILURES).fill(401), 429, 429]);
    expect(await status('ws', { localAddress: A })).toBe(429);
    // B's budget is untouched: a wrong key is still checked (401), on every HTTP location.
    for (const proto of ['sse', 'ws', 'grpc-proxy'] as const)
      expect(await status(proto, { localAddress: B }), proto).toBe(401);

    // gRPC on its own port carries the address nginx saw (grpc_set_header): its client connects
    // from 127.0.0.1, so once that address has spent its budget over SSE, its gRPC call is refused
    // (without the header the edge would count nginx's own address, unspent: 401).
    for (let i = 0; i < AUTH_FAILURES; i++)
      expect(await status('sse', { localAddress: '127.0.0.1' })).toBe(401);
    expect(await status('grpc', {})).toBe(429);
    expect(await status('sse', { localAddress: B })).toBe(401);
  });

  it('the API behind the proxy counts the address nginx saw, not one a client forges', async () => {
    // GET /api/games with a wrong key from `from`, naming `forged` in X-Forwarded-For.
    const games = (from: string, forged: string) =>
      new Promise<number>((resolve, reject) => {
        const headers = {
          'x-api-key': `sk_live_${randomBytes(32).toString('hex')}`,
          'x-forwarded-for': forged,
        };
        const path = '/api/games';
        get(
          { host: '127.0.0.1', port: proxyHttp, path, localAddress: from, headers, agent: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        ).once('error', reject);
      });
    // A guesser forging a new address on every request (RFC 5737 range) is still one client, the
    // one nginx appends, and a browser it named is not charged.
    const [A, B] = ['127.0.0.5', '127.0.0.6'];
    const seen: number[] = [];
    for (let i = 0; i <= AUTH_FAILURES; i++) seen.push(await games(A, `${B}, 198.51.100.${i + 1}`));
    expect(seen).toEqual([...Array(AUTH_FAILURES).fill(401), 429]);
    expect(await games(B, A)).toBe(401);
  });

  it('spreads streams over both edges; a draining edge costs its SSE clients only a resume', async () => {
    const [a, b] = edges as [EdgeProc, EdgeProc];
    const clients: SseClient[] = [];
    for (let i = 0; i < 6; i++) clients.push(await openSse(proxyHttp, '/sse/double'));
    await waitFor('subscribers on both edges', async () =>
      (await subscribers(a, 'sse')) > 0 && (await subscribers(b, 'sse')) > 0 ? true : undefined,
    );

    const sent: number[] = [];
    const burst = async (n: number) => {
      const rounds = Array.from({ length: n }, () => next('double'));
      sent.push(...rounds.map((x) => x.round_id));
      await log.append(rounds);
    };
    await burst(5);
    await until(() => clients.every((c) => messageIds(c).length >= 5), 15_000, 'first burst everywhere');

    // Edge A drains; its clients see their stream end and reconnect through the proxy with the
    // last id they saw, while rounds keep coming.
    const stopped = a.svc.stop('SIGTERM');
    const streams: SseClient[][] = clients.map((c) => [c]);
    const resumeEnded = async () => {
      for (const chain of streams) {
        const last = chain.at(-1) as SseClient;
        if (!last.ended) continue;
        const lastId = [...chain.flatMap((c) => c.named())].reverse().find((e) => e.id !== undefined)?.id;
        chain.push(await openSse(proxyHttp, '/sse/double', lastId ? { 'Last-Event-ID': lastId } : {}));
      }
    };
    await until(() => clients.some((c) => c.ended), 10_000, 'a stream of edge A ended');
    await burst(3);
    await resumeEnded();
    expect(await stopped).toBe(0);
    await burst(4);
    const all = (chain: SseClient[]) => chain.flatMap(messageIds);
    await waitFor(
      'every round on every client, resumed where its edge went away',
      async () => {
        await resumeEnded();
        const done = streams.every((chain) => all(chain).length >= sent.length && !chain.at(-1)?.ended);
        return done ? true : undefined;
      },
      20_000,
      50,
    );
    for (const chain of streams) expect(all(chain)).toEqual(sent);
    expect(streams.some((chain) => chain.length > 1)).toBe(true);

    // New connections still work with one edge down.
    const late = await openSse(proxyHttp, '/sse/double');
    expect(late.res.statusCode).toBe(200);
    for (const chain of streams) for (const c of chain) c.close();
    late.close();
    a.svc = startService('services/edge/main.ts', a.env);
  });
});
