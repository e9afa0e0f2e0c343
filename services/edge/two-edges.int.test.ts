/**
 * several edges side by side each deliver every round to their own subscribers (each
 * reads every partition with a consumer group of its own). Two edges in one process here; the
 * e2e test (edge.e2e.test.ts) does the same with two `services/edge/main.ts` processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundFinished, StreamRound } from '../../rules/rounds/round.ts';
import { createTestLog, round, startEdge, type TestLog } from '../../tests/support/edge.ts';
import { until } from '../../tests/support/poll.ts';
import { openSse, type SseClient } from '../../tests/support/sse-client.ts';
import type { Edge } from './edge.ts';
import { createSseTransport } from './transports/sse/sse.ts';
import { createWsTransport } from './transports/ws/ws.ts';

function wsFrames(edge: Edge, path: string): Promise<{ ws: WebSocket; got: StreamRound[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${edge.portOf('ws')}${path}`);
  const got: StreamRound[] = [];
  ws.on('message', (d) => got.push(JSON.parse(d.toString()) as StreamRound));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, got }));
    ws.once('error', reject);
  });
}

const sseRounds = (c: SseClient) =>
  c
    .named()
    .filter((e) => e.event === 'message')
    .map((e) => JSON.parse(e.data as string) as StreamRound);

describe('two edges side by side', () => {
  let log: TestLog;
  let edges: Edge[] = [];

  beforeAll(async () => {
    log = await createTestLog();
    edges = [
      await startEdge(log, [createWsTransport(), createSseTransport()]),
      await startEdge(log, [createWsTransport(), createSseTransport()]),
    ];
  });
  afterAll(async () => {
    await Promise.all(edges.map((e) => e.stop(0)));
    await log?.close();
  });

  it('each delivers every round to its own WebSocket and SSE subscribers', async () => {
    const perEdge = await Promise.all(
      edges.map(async (e) => ({
        multiplier: await wsFrames(e, '/ws/type/multiplier'),
        crash: await wsFrames(e, '/ws/crash'),
        color: await openSse(e.httpPort, '/sse/type/color'),
      })),
    );
    const slugs: GameSlug[] = ['crash', 'double', 'slot', 'wall-street'];
    const rounds: RoundFinished[] = [];
    for (let i = 1; i <= 40; i++) rounds.push(round(slugs[i % 4] as GameSlug, i));
    for (let i = 0; i < rounds.length; i += 8) await log.append(rounds.slice(i, i + 8));

    const ids = (slugSet: string[]) =>
      rounds.filter((r) => slugSet.includes(r.game_slug)).map((r) => r.round_id);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    for (const p of perEdge) {
      await until(
        () => p.multiplier.got.length >= 20 && p.crash.got.length >= 10 && sseRounds(p.color).length >= 10,
        20_000,
        'every round on both edges',
      );
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const p of perEdge) {
      expect(sorted(p.multiplier.got.map((r) => r.round_id))).toEqual(sorted(ids(['crash', 'slot'])));
      expect(p.crash.got.map((r) => r.round_id)).toEqual(ids(['crash']));
      expect(sseRounds(p.color).map((r) => r.round_id)).toEqual(ids(['double']));
      p.multiplier.ws.close();
      p.crash.ws.close();
      p.color.close();
    }
  });
});
