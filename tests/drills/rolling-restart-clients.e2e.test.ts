/**
 * Rolling restart of two edges of each kind under the stream client: a
 * fast round engine; two Node edges (WebSocket, SSE, gRPC) and two WebTransport edges (Deno); the
 * client library in headless Chromium over WebSocket, SSE and WebTransport and in Node over gRPC,
 * WebSocket and SSE, each holding a type and a game subscription and knowing both edges. Edge 1 of
 * each kind is stopped with SIGTERM (streams drained), started again, then edge 2. At the end every
 * client holds every round appended after its subscriptions started, exactly once and in order per
 * game, as the rounds topic has them. Runs on the shared broker in a namespace of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { topicName } from '../../lib/log/topics.ts';
import { grpcTransport } from '../../packages/client/src/grpc.ts';
import { sseTransport, websocketTransport } from '../../packages/client/src/index.ts';
import { BROWSER_ARGS, CHROMIUM } from '../support/chromium.ts';
import {
  type ClientRecord,
  nodeClient,
  openPageClient,
  pageRecord,
  recordProblems,
  serveClientBundle,
} from '../support/client-page.ts';
import {
  awaitRoundsOfEveryGame,
  createDrillEnv,
  type DrillEnv,
  type EdgeProcess,
  roundsInLog,
} from '../support/drill.ts';
import { waitFor } from '../support/poll.ts';
import { devCertDir, freePort, timedStop } from '../support/processes.ts';
import { startWtEdge, type WtEdgeProcess } from '../support/webtransport.ts';

const DRAIN_MS = 1500;
const SUBS = [{ type: 'multiplier' }, { game: 'double' }] as const;
const GAMES = { 'type:multiplier': ['crash', 'slot'], 'game:double': ['double'] };
const PAGE_CLIENTS = ['websocket', 'sse', 'webtransport'] as const;

let d: DrillEnv;
let browser: Browser | undefined;
let page: Page;
let site: Awaited<ReturnType<typeof serveClientBundle>>;
let certDir: string;
const wt: { proc: WtEdgeProcess; env: Record<string, string>; quic: number; http: number }[] = [];
const node: ReturnType<typeof nodeClient>[] = [];

/** A WebTransport edge on fixed ports (so a restart comes back where clients look for it). */
async function startWt(env: Record<string, string>): Promise<WtEdgeProcess> {
  const proc = startWtEdge(env);
  await proc.started;
  return proc;
}

beforeAll(async () => {
  d = await createDrillEnv('clients');
  certDir = devCertDir('rolling-clients-cert-');
  site = await serveClientBundle();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...BROWSER_ARGS] });
  page = await browser.newPage();
  await page.goto(site.origin);
}, 120_000);

afterAll(async () => {
  for (const c of node) c.close();
  for (const w of wt) await w.proc.kill();
  await browser?.close();
  await site?.close();
  await d?.close();
}, 60_000);

describe('rolling restart of two edges of each kind under the stream client', () => {
  it('loses and repeats no round for any client, browser or Node, on any protocol', async () => {
    const topic = topicName(d.config, 'rounds');
    const engine = d.start('services/round-engine/main.ts', { ROUND_SPEED: '60' });
    try {
      await awaitRoundsOfEveryGame(d.kafka, topic);
      const edgeEnv = { EDGE_DRAIN_MS: String(DRAIN_MS), AUTH_REQUIRE_GRPC: 'false' };
      const grpcPorts = [await freePort(), await freePort()];
      const edges: EdgeProcess[] = [
        await d.startEdge({ ...edgeEnv, GRPC_PORT: String(grpcPorts[0]) }),
        await d.startEdge({ ...edgeEnv, GRPC_PORT: String(grpcPorts[1]) }),
      ];
      for (let i = 0; i < 2; i++) {
        const quic = await freePort();
        const http = await freePort();
        const env = {
          ...d.env,
          EDGE_DRAIN_MS: String(DRAIN_MS),
          WT_PORT: String(quic),
          WT_HTTP_PORT: String(http),
          WT_DEV_CERT_DIR: certDir,
        };
        wt.push({ proc: await startWt(env), env, quic, http });
      }
      const bases = edges.map((e) => `http://127.0.0.1:${e.httpPort}`);
      const wsUrls = Object.fromEntries(edges.map((e, i) => [bases[i], `ws://127.0.0.1:${e.wsPort}/ws/`]));
      const grpcOf = Object.fromEntries(bases.map((b, i) => [b, `127.0.0.1:${grpcPorts[i]}`]));
      const wtBases = wt.map((w) => `http://127.0.0.1:${w.http}`);
      const wtUrls = Object.fromEntries(wt.map((w, i) => [wtBases[i], `https://127.0.0.1:${w.quic}/wt`]));

      // Half of the clients start on each edge (the list order is the order of their attempts).
      const rot = (l: readonly string[], i: number) => [...l.slice(i % 2), ...l.slice(0, i % 2)];
      for (const [i, kind] of PAGE_CLIENTS.entries()) {
        const targets =
          kind === 'webtransport'
            ? { bases: rot(wtBases, i), wtUrls, certHashUrl: `${wtBases[0]}/cert-hash` }
            : { bases: rot(bases, i), wsUrls };
        await openPageClient(page, kind, kind, targets, SUBS);
      }
      node.push(
        nodeClient(grpcTransport({ address: (b) => grpcOf[b] as string }), bases, SUBS),
        nodeClient(
          websocketTransport({
            url: (b) => wsUrls[b] as string,
            WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
          }),
          rot(bases, 1),
          SUBS,
        ),
        nodeClient(sseTransport(), rot(bases, 1), SUBS),
      );
      const records = async (): Promise<[string, ClientRecord][]> => [
        ...(await Promise.all(
          PAGE_CLIENTS.map(async (k) => [`page ${k}`, await pageRecord(page, k)] as [string, ClientRecord]),
        )),
        ...node.map((c, i): [string, ClientRecord] => [`node ${['grpc', 'websocket', 'sse'][i]}`, c.record]),
      ];
      const summary = async () =>
        JSON.stringify(
          (await records()).map(([n, r]) => ({ n, starts: r.starts, states: r.states, errors: r.errors })),
        );
      await waitFor(
        'every client subscribed',
        async () =>
          (await records()).every(([, r]) => Object.keys(r.starts).length === 2) ? true : undefined,
        30_000,
        200,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${await summary()}`);
      });
      await sleep(2000);

      for (const i of [0, 1]) {
        const t = performance.now();
        const [{ code, ms }, wtCode] = await Promise.all([
          timedStop((edges[i] as EdgeProcess).svc, DRAIN_MS + 30_000),
          (async () => {
            const w = wt[i] as (typeof wt)[number];
            w.proc.child.kill('SIGTERM');
            return await w.proc.exited;
          })(),
        ]);
        expect(code).toBe(0);
        expect(wtCode).toBe(0);
        expect(ms).toBeGreaterThanOrEqual(DRAIN_MS * 0.5);
        const w = wt[i] as (typeof wt)[number];
        [edges[i], w.proc] = await Promise.all([(edges[i] as EdgeProcess).restart(), startWt(w.env)]);
        console.info(
          `rolling restart (clients): edges ${i + 1} back after ${Math.round(performance.now() - t)} ms`,
        );
        await sleep(2000);
      }
      await sleep(1000);
      expect(await engine.stop('SIGTERM')).toBe(0);

      const log = await roundsInLog(d.kafka, topic);
      const problems = async () =>
        (await records()).flatMap(([name, r]) => recordProblems(r, log, GAMES).map((p) => `${name}: ${p}`));
      const left = await waitFor(
        'every client to have every round',
        async () => ((await problems()).length === 0 ? [] : undefined),
        30_000,
        500,
      ).catch(problems);
      expect(left).toEqual([]);
      for (const [name, r] of await records()) {
        expect(r.errors, name).toEqual([]);
        expect(r.states.filter((s) => s.startsWith('reconnecting')).length, name).toBeGreaterThanOrEqual(1);
      }
      const total = (await records()).reduce((n, [, r]) => n + Object.values(r.rounds).flat().length, 0);
      console.info(
        `rolling restart (clients): ${[...log.values()].flat().length} rounds in the log, ${total} given to 6 clients, none lost or repeated`,
      );
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\n${d.logs()}\n${wt.map((w) => w.proc.output().slice(-2000)).join('\n')}`,
      );
    }
  }, 300_000);
});
