/**
 * The native WebTransport load client (bench/edge-wt-native.ts driving Deno processes of
 * bench/edge-wt-load.ts) against a real Deno WebTransport edge and broker: sessions open with a
 * token the way a page's do, every appended crash round arrives once per session with its
 * latency, the tally and the window probe see nothing missed, a refused session is counted as
 * failed, closing ends the sessions at the edge and the client processes, and sessions the edge
 * ends are counted with their reason.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendKeyEvent } from '../lib/auth/key-events.ts';
import { encodeRound } from '../lib/log/rounds-codec.ts';
import { topicName } from '../lib/log/topics.ts';
import { testKey } from '../tests/support/credentials.ts';
import { syntheticRound } from '../tests/support/rounds-fixture.ts';
import {
  createWtTestBed,
  readMetric,
  startWtEdge,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../tests/support/webtransport.ts';
import { scrape } from './edge-harness.ts';
import { awaitDeliveries } from './edge-pool.ts';
import { type NativeWtGroup, nativeClients, probeWindow } from './edge-wt-native.ts';

const SESSIONS = 6;
const ROUNDS = 5;
const tokenSecret = randomBytes(32);
const key = testKey({ scopes: ['stream:game'] });

let bed: WtTestBed;
let edge: WtEdgeProcess;
let ports: { quicPort: number; httpPort: number };
let seq = 0;
const groups: NativeWtGroup[] = [];

const sessionsAtEdge = () => readMetric(ports.httpPort, 'edge_subscribers', 'protocol="webtransport"');

/** Appends `n` rounds of game `game` (0 crash, 1 double), one send each, in different milliseconds. */
async function appendRounds(game: 0 | 1, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    // A round is known by its append time (timestamp): two in one millisecond would look like one.
    await new Promise((r) => setTimeout(r, 5));
    const r = syntheticRound(game, ++seq, Date.now());
    await bed.producer.send({
      topic: topicName(bed.config, 'rounds'),
      messages: [{ key: r.game_slug, value: encodeRound(r) }],
    });
  }
}

/** A group of `processes` client processes; closed after the file. */
async function clients(processes: number, path: string): Promise<NativeWtGroup> {
  const g = await nativeClients({ ...ports, processes, path, timeoutMs: 10_000 });
  groups.push(g);
  return g;
}

beforeAll(async () => {
  bed = await createWtTestBed('t-wtn-');
  await appendKeyEvent(bed.producer, bed.config, { type: 'KeyCreated', value: key.event });
  edge = startWtEdge({
    TOPIC_NAMESPACE: bed.ns,
    WT_DEV_CERT_DIR: bed.certDir,
    EDGE_DRAIN_MS: '200',
    AUTH_REQUIRE_WT: 'true',
    AUTH_TOKEN_SECRET: tokenSecret.toString('hex'),
  });
  ports = await edge.started;
  await waitFor('/ready', async () =>
    (await fetch(`http://127.0.0.1:${ports.httpPort}/ready`)).status === 200 ? true : undefined,
  );
}, 120_000);

afterAll(async () => {
  for (const g of groups) await g.close().catch(() => {});
  await edge?.kill();
  await bed?.close();
});

describe('native WebTransport load client (Deno) against the WebTransport edge', () => {
  it('holds sessions opened with a token and records every round once per session', async () => {
    // The edge's key table follows the auth-keys topic; until it holds the key, sessions are refused.
    const g = await clients(1, `/wt?game=crash&token=${key.token(tokenSecret)}`);
    await waitFor('the key to be accepted', async () => ((await g.open(1)).opened === 1 ? true : undefined));
    const more = await clients(2, `/wt?game=crash&token=${key.token(tokenSecret)}`);
    const opened = await more.open(SESSIONS);
    expect(opened).toMatchObject({ opened: SESSIONS, failed: 0 });
    expect(opened.ms).toBeGreaterThan(0);
    await waitFor('the edge to count every session', async () =>
      (await sessionsAtEdge()) === SESSIONS + 1 ? true : undefined,
    );
    expect(more.pids).toHaveLength(2);

    const since = Date.now();
    await more.reset(since);
    const metricsUrl = `http://127.0.0.1:${ports.httpPort}/metrics`;
    const window = await probeWindow(more, {
      pid: edge.child.pid as number,
      metric: (name, labels) => scrape(metricsUrl, name, labels),
    });
    const t0 = Date.now();
    await appendRounds(1, 2); // another game: not this subscription's
    await appendRounds(0, ROUNDS);
    const t1 = Date.now();
    expect(await awaitDeliveries(more, SESSIONS * ROUNDS, 20_000)).toBe(SESSIONS * ROUNDS);

    const s = await more.stats();
    expect(s.count).toBe(SESSIONS * ROUNDS);
    const perRound = new Map<number, number>();
    for (const ts of s.timestamps) perRound.set(ts, (perRound.get(ts) ?? 0) + 1);
    expect(perRound.size).toBe(ROUNDS);
    for (const [ts, n] of perRound) {
      expect(n).toBe(SESSIONS);
      expect(ts).toBeGreaterThanOrEqual(t0 - 5);
      expect(ts).toBeLessThanOrEqual(t1 + 5);
    }
    for (const l of s.latencies) {
      expect(l).toBeGreaterThanOrEqual(-5);
      expect(l).toBeLessThan(10_000);
    }
    expect(s.first).toBeGreaterThanOrEqual(since);
    expect(s.last).toBeGreaterThanOrEqual(s.first);
    expect(await more.tally()).toEqual({
      open: SESSIONS,
      ended: 0,
      endedBy: {},
      best: ROUNDS,
      short: 0,
      missed: 0,
    });
    expect(await window.done()).toMatch(
      /^missed 0 datagrams in 0 of 6 sessions \(best 5\); edge send failed 0, too large 0; .*; 0 sessions ended so far; waiting for a CPU: edge \d+% of the window, clients \d+% \(main threads\)$/,
    );

    await more.close();
    await g.close();
    await waitFor('the edge to let every session go', async () =>
      (await sessionsAtEdge()) === 0 ? true : undefined,
    );
    for (const pid of [...more.pids, ...g.pids]) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('counts a refused session as failed, with the reason', async () => {
    const refused = () => readMetric(ports.httpPort, 'edge_wt_session_requests_total', 'status="401"');
    const before = await refused();
    const g = await clients(1, '/wt?game=crash&token=tok_00');
    const r = await g.open(2);
    expect(r).toMatchObject({ opened: 0, failed: 2 });
    expect(r.firstError).toBeTruthy();
    expect(await refused()).toBe(before + 2);
    expect(await g.tally()).toEqual({ open: 0, ended: 0, endedBy: {}, best: 0, short: 0, missed: 0 });
  });

  it('counts sessions the edge ends, with their reason (last: it stops the edge)', async () => {
    const g = await clients(1, `/wt?game=crash&token=${key.token(tokenSecret)}`);
    expect(await g.open(2)).toMatchObject({ opened: 2, failed: 0 });
    edge.child.kill('SIGTERM');
    await edge.exited;
    const t = await waitFor('both sessions to end', async () => {
      const tally = await g.tally();
      return tally.ended === 2 ? tally : undefined;
    });
    expect(t.open).toBe(0);
    expect(Object.values(t.endedBy).reduce((a, b) => a + b, 0)).toBe(2);
  });
});
