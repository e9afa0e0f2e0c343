/**
 * The compose deployment's front door: ops/nginx/casino.conf.template run by a
 * local nginx in front of the real API, two real edge processes and the Deno WebTransport edge.
 * Every path of the seed answers from the one origin, gRPC is balanced on its own port, streams
 * spread over both edges, and when one edge drains (SIGTERM) its SSE clients resume through the
 * proxy on the other with no round missed or doubled. Also checks that the compose `proxy`
 * service sets exactly the settings the template uses.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
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
    });
    for (let i = 0; i < 2; i++) {
      const [http, ws, grpc] = [await freePort(), await freePort(), await freePort()];
      const env = {
        ...common,
        EDGE_HTTP_PORT: String(http),
        EDGE_WS_PORT: String(ws),
        GRPC_PORT: String(grpc),
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
