/**
 * The edge process with EDGE_WS_THREADS=2 (ws-threads.ts): WebSocket subscribers on the one port
 * are spread over both threads by the kernel (each thread's subscribers in /metrics, the worker's
 * labelled thread="1"), every subscriber gets every round once, and SIGTERM drains the sockets of
 * both threads (1001) and exits 0 (a thread that ended with its uWebSockets.js app open would abort
 * the process instead).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RoundFinished, StreamRound } from '../../rules/rounds/round.ts';
import { createTestLog, round, type TestLog } from '../../tests/support/edge.ts';
import { until, waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService, uniqueId } from '../../tests/support/processes.ts';

const SUBSCRIBERS = 48;

describe('edge with two WebSocket threads', () => {
  let log: TestLog;
  let svc: Service;
  let http: number;
  let wsPort: number;

  beforeAll(async () => {
    log = await createTestLog({ TOPIC_NAMESPACE: `${uniqueId('e2e-wst-')}-` });
    http = await freePort();
    wsPort = await freePort();
    svc = startService('services/edge/main.ts', {
      TOPIC_NAMESPACE: log.config.kafka.topicNamespace,
      EDGE_HTTP_PORT: String(http),
      EDGE_WS_PORT: String(wsPort),
      EDGE_WS_THREADS: '2',
      GRPC_PORT: '0',
      EDGE_DRAIN_MS: '300',
    });
    await waitFor('edge ready', async () => {
      const r = await fetch(`http://127.0.0.1:${http}/ready`).catch(() => undefined);
      return r?.status === 200 ? true : undefined;
    });
  });
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await log?.close();
  });

  /** edge_subscribers{protocol="ws"} per thread ("0" for the main thread) from /metrics. */
  const subscribersByThread = async (): Promise<Map<string, number>> => {
    const text = await (await fetch(`http://127.0.0.1:${http}/metrics`)).text();
    const out = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (!line.startsWith('edge_subscribers{') || !line.includes('protocol="ws"')) continue;
      const thread = /thread="(\d+)"/.exec(line)?.[1] ?? '0';
      out.set(thread, (out.get(thread) ?? 0) + Number(line.split(' ').pop()));
    }
    return out;
  };

  it('spreads subscribers over both threads, delivers every round once to each, drains both on SIGTERM', async () => {
    const clients = await Promise.all(
      Array.from({ length: SUBSCRIBERS }, async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${wsPort}/ws/crash`);
        const got: number[] = [];
        let closed: number | undefined;
        ws.on('message', (d) => got.push((JSON.parse(d.toString()) as StreamRound).round_id));
        ws.on('close', (code) => {
          closed = code;
        });
        await new Promise((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
        });
        return { got, closed: () => closed };
      }),
    );
    // Each thread's subscribers, as its own /metrics series.
    const byThread = await waitFor('every subscriber counted', async () => {
      const m = await subscribersByThread();
      return [...m.values()].reduce((a, b) => a + b, 0) === SUBSCRIBERS ? m : undefined;
    });
    expect([...byThread.keys()].sort()).toEqual(['0', '1']);
    for (const n of byThread.values()) expect(n).toBeGreaterThan(0);

    const rounds: RoundFinished[] = [];
    for (let i = 1; i <= 12; i++) rounds.push(round('crash', i));
    await log.append(rounds);
    const ids = rounds.map((r) => r.round_id);
    for (const c of clients) await until(() => c.got.length >= ids.length, 20_000, 'all rounds');
    await new Promise((r) => setTimeout(r, 300));
    for (const c of clients) expect(c.got).toEqual(ids);

    expect(await svc.stop('SIGTERM')).toBe(0);
    await until(() => clients.every((c) => c.closed() !== undefined), 5_000, 'drained');
    for (const c of clients) expect(c.closed()).toBe(1001);
  });
});
