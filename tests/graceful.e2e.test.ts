/**
 * Graceful stop of every service that is not a consumer with a checkpoint (the
 * consumers: graceful-consumers.e2e.test.ts and graceful-saga.e2e.test.ts). Each runs as a real
 * process, is given work, and is sent SIGTERM; it must exit 0 within SHUTDOWN_TIMEOUT_MS (edges:
 * plus EDGE_DRAIN_MS) and leave nothing half-done: the round engine's log has no gap and a restart
 * continues it; the API answers only ever 200 or 503 while it closes; the edge closes
 * its WebSockets with 1001 spread over its drain window while /ready already says 503; the Deno
 * WebTransport edge, the gateway, the operator sandbox and the bots (even while still waiting for
 * their operator file) exit 0.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { topicName } from '../lib/log/topics.ts';
import { createDrillEnv, type DrillEnv, logGaps, recordCount, roundsInLog } from './support/drill.ts';
import { waitFor } from './support/poll.ts';
import {
  devCertDir,
  freePort,
  type Service,
  statusOf,
  timedStop,
  uniqueId,
  waitReady,
} from './support/processes.ts';
import { startWtEdge, type WtEdgeProcess } from './support/webtransport.ts';

const BOUND_MS = 15_000;
const DRAIN_MS = 2000;
let d: DrillEnv;

beforeAll(async () => {
  d = await createDrillEnv('graceful', { SHUTDOWN_TIMEOUT_MS: String(BOUND_MS) });
});

afterAll(async () => {
  await d?.close();
}, 60_000);

/** SIGTERM (SIGKILL 10 s past `boundMs`), then the exit code and how long the stop took (ms). */
const terminate = (s: Service, boundMs = BOUND_MS) => timedStop(s, boundMs + 10_000);

describe('services stop cleanly on SIGTERM', () => {
  it('round engine: stops after the round being appended; the log has no gap and a restart continues it', async () => {
    const topic = topicName(d.config, 'rounds');
    for (const target of [40, 80]) {
      const engine = d.start('services/round-engine/main.ts', { ROUND_SPEED: '60' });
      await waitFor(
        `${target} rounds`,
        async () => ((await recordCount(d.kafka, topic)) >= target ? true : undefined),
        60_000,
        100,
      );
      const { code, ms } = await terminate(engine);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(BOUND_MS);
      const log = await roundsInLog(d.kafka, topic);
      expect(logGaps(log)).toEqual([]);
      expect(log.size).toBe(4);
    }
  }, 120_000);

  it('api: stops accepting, answers only ever 200 or 503 (never a 5xx from the stop), and exits 0', async () => {
    const port = await freePort();
    const api = d.start('services/api/main.ts', { API_PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/ready`);
    const statuses = new Map<number, number>();
    const errors = new Map<string, number>();
    let running = true;
    const load = Array.from({ length: 8 }, async () => {
      while (running) {
        try {
          const res = await fetch(`${base}/api/games`);
          await res.body?.cancel();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        } catch (err) {
          const cause = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
          errors.set(cause, (errors.get(cause) ?? 0) + 1); // a closed listener: the balancer's cue to go elsewhere
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    const { code, ms } = await terminate(api);
    running = false;
    await Promise.all(load);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    // After the close: refused, or reset when a request raced the closing of an idle keep-alive
    // connection (never read by the server; docs/decisions/readiness/0004-graceful-stop.md).
    const connectionLevel = ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'];
    expect([...errors.keys()].filter((c) => !connectionLevel.includes(c))).toEqual([]);
    console.info(
      `graceful api: stop took ${Math.round(ms)} ms; answers ${JSON.stringify(Object.fromEntries(statuses))}, then ${JSON.stringify(Object.fromEntries(errors))}`,
    );
  }, 90_000);

  it('edge: /ready turns 503, WebSockets close with 1001 spread over EDGE_DRAIN_MS, exit 0', async () => {
    const edge = await d.startEdge({ EDGE_DRAIN_MS: String(DRAIN_MS) });
    const closes: { code: number; at: number }[] = [];
    const sockets = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${edge.wsPort}/ws/crash`);
        ws.on('close', (code) => closes.push({ code, at: performance.now() }));
        await new Promise((res, rej) => {
          ws.once('open', res);
          ws.once('error', rej);
        });
        return ws;
      }),
    );
    const t = performance.now();
    const stopped = terminate(edge.svc, DRAIN_MS + BOUND_MS);
    const readyDuringDrain = await waitFor(
      '/ready 503 during the drain',
      async () => ((await statusOf(`http://127.0.0.1:${edge.httpPort}/ready`)) === 503 ? true : undefined),
      DRAIN_MS,
      20,
    ).catch(() => false);
    const { code, ms } = await stopped;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(DRAIN_MS + BOUND_MS);
    expect(readyDuringDrain).toBe(true);
    await waitFor('every close event', () => (closes.length === sockets.length ? true : undefined), 5000, 20);
    expect(closes.map((c) => c.code)).toEqual(sockets.map(() => 1001));
    const first = Math.min(...closes.map((c) => c.at)) - t;
    const last = Math.max(...closes.map((c) => c.at)) - t;
    expect(last - first).toBeGreaterThanOrEqual(DRAIN_MS * 0.5); // spread, not all at once
    console.info(
      `graceful edge: 20 WebSockets closed 1001 between ${Math.round(first)} and ${Math.round(last)} ms; exit after ${Math.round(ms)} ms`,
    );
  }, 90_000);

  it('webtransport edge (Deno), gateway, operator sandbox and bots exit 0', async () => {
    const certDir = devCertDir('graceful-wt-');
    const sandboxSchema = uniqueId('graceful_sandbox_');
    let wt: WtEdgeProcess | undefined;
    try {
      wt = startWtEdge({ ...d.env, WT_DEV_CERT_DIR: certDir, EDGE_DRAIN_MS: '500' });
      const { httpPort } = await wt.started;
      await waitReady(`http://127.0.0.1:${httpPort}/ready`);
      const t = performance.now();
      wt.child.kill('SIGTERM');
      expect(await wt.exited).toBe(0);
      expect(performance.now() - t).toBeLessThan(500 + BOUND_MS);

      const gatewayPort = await freePort();
      const gateway = d.start('services/gateway/main.ts', { GATEWAY_PORT: String(gatewayPort) });
      await waitReady(`http://127.0.0.1:${gatewayPort}/health`, 30_000);
      const sandboxPort = await freePort();
      const sandbox = d.start('services/operator-sandbox/main.ts', {
        SANDBOX_PORT: String(sandboxPort),
        SANDBOX_DB_SCHEMA: sandboxSchema,
        SANDBOX_SIGNING_SECRET: `whsec_${Buffer.from('graceful-drill-secret-32-bytes!!').toString('base64')}`,
      });
      await waitReady(`http://127.0.0.1:${sandboxPort}/ready`, 30_000);
      // No operator file yet: the bots are still waiting for it when the signal comes.
      const bots = d.start('services/bots/main.ts', {
        BOTS_PLAYERS: '2',
        BOTS_OPERATOR_FILE: join(certDir, 'no-operator.json'),
      });
      // Its stop is registered once it logs this (then it waits for the operator file).
      await waitFor('bots to start waiting for the operator file', () =>
        bots.output().includes('bots ops endpoints listening') || bots.child.exitCode !== null
          ? true
          : undefined,
      );
      expect(bots.child.exitCode, bots.output()).toBeNull();
      for (const [name, s] of Object.entries({ gateway, sandbox, bots })) {
        const { code, ms } = await terminate(s);
        expect(code, name).toBe(0);
        expect(ms, name).toBeLessThan(BOUND_MS);
      }
    } finally {
      await wt?.kill(); // not one of d's processes: stopped here when the test fails before its SIGTERM
      rmSync(certDir, { recursive: true, force: true });
      await d.sql.unsafe(`drop schema if exists "${sandboxSchema}" cascade`);
    }
  }, 120_000);
});
