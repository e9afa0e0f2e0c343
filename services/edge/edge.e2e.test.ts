/**
 * The edge as real processes (`services/edge/main.ts`): two of them side by side on one broker
 * each deliver every round to their own WebSocket and SSE subscribers; SIGTERM drains (WebSocket
 * 1001, SSE streams ended) and exits 0; a uWS without its native binary stops start-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundFinished, StreamRound } from '../../rules/rounds/round.ts';
import { createTestLog, round, type TestLog } from '../../tests/support/edge.ts';
import { until, waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService, uniqueId } from '../../tests/support/processes.ts';
import { openSse, type SseClient } from '../../tests/support/sse-client.ts';

interface Proc {
  readonly svc: Service;
  readonly http: number;
  readonly ws: number;
}

describe('edge processes', () => {
  let log: TestLog;
  const procs: Proc[] = [];

  beforeAll(async () => {
    log = await createTestLog({ TOPIC_NAMESPACE: `${uniqueId('e2e-edge-')}-` });
    for (let i = 0; i < 2; i++) {
      const http = await freePort();
      const ws = await freePort();
      const svc = startService('services/edge/main.ts', {
        TOPIC_NAMESPACE: log.config.kafka.topicNamespace,
        EDGE_HTTP_PORT: String(http),
        EDGE_WS_PORT: String(ws),
        GRPC_PORT: '0',
        EDGE_DRAIN_MS: '300',
      });
      procs.push({ svc, http, ws });
    }
    for (const p of procs) {
      await waitFor('edge ready', async () => {
        const r = await fetch(`http://127.0.0.1:${p.http}/ready`);
        return r.status === 200 ? true : undefined;
      });
    }
  });
  afterAll(async () => {
    for (const p of procs) await p.svc.stop('SIGKILL');
    await log?.close();
  });

  it('two processes each deliver every round; SIGTERM drains and exits 0', async () => {
    const clients = await Promise.all(
      procs.map(async (p) => {
        const ws = new WebSocket(`ws://127.0.0.1:${p.ws}/ws/type/multiplier`);
        const got: StreamRound[] = [];
        let closed: number | undefined;
        ws.on('message', (d) => got.push(JSON.parse(d.toString()) as StreamRound));
        ws.on('close', (code) => {
          closed = code;
        });
        await new Promise((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
        });
        const sse: SseClient = await openSse(p.http, '/sse/crash');
        return { ws, got, sse, closed: () => closed };
      }),
    );
    const slugs: GameSlug[] = ['crash', 'double', 'slot', 'wall-street'];
    const rounds: RoundFinished[] = [];
    for (let i = 1; i <= 24; i++) rounds.push(round(slugs[i % 4] as GameSlug, i));
    await log.append(rounds);
    const mult = rounds.filter((r) => r.game_slug !== 'double' && r.game_slug !== 'wall-street');
    const crash = rounds.filter((r) => r.game_slug === 'crash').map((r) => r.round_id);
    const sseIds = (c: SseClient) =>
      c
        .named()
        .filter((e) => e.event === 'message')
        .map((e) => (JSON.parse(e.data as string) as StreamRound).round_id);
    for (const c of clients) {
      await until(
        () => c.got.length >= mult.length && sseIds(c.sse).length >= crash.length,
        20_000,
        'all rounds',
      );
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const c of clients) {
      expect(c.got.map((r) => r.round_id).sort()).toEqual(mult.map((r) => r.round_id).sort());
      expect(sseIds(c.sse)).toEqual(crash);
    }

    for (const [i, p] of procs.entries()) {
      expect(await p.svc.stop('SIGTERM')).toBe(0);
      const c = clients[i];
      await until(() => c?.closed() !== undefined && c.sse.ended, 5_000, 'drained');
      expect(c?.closed()).toBe(1001);
    }
  });
});
