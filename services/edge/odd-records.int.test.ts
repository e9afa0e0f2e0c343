/**
 * Every stream protocol of the Node edge against odd records appended straight to a real `rounds`
 * topic (tests/support/odd-rounds.ts), as found from outside: a slot round 4 ids ahead of the
 * engine, finished 10 minutes in the future, made live and resumed streams skip the engine's rounds
 * up to its id. Here, after it and a round from year 0, a duplicate, a conflicting duplicate and a
 * round of a lower id, every later engine round reaches SSE, WebSocket and gRPC subscribers once and
 * in order, live and resumed from a position taken before the odd records; the refused records are
 * counted by reason.
 */
import { type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extrasOf, type RoundFinished } from '../../rules/rounds/round.ts';
import { createTestLog, metricValue, startEdge, type TestLog } from '../../tests/support/edge.ts';
import { oddScenario } from '../../tests/support/odd-rounds.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { type Attempt, attempt } from '../../tests/support/stream-clients.ts';
import type { Edge } from './edge.ts';
import { createDataStreamClient, type DataStreamClient, type RoundMsg } from './transports/grpc/proto.ts';

let log: TestLog;
let edge: Edge;
let grpc: DataStreamClient;
const opened: { close(): void }[] = [];

/** Round ids in the messages of a WebSocket, SSE (data lines) or gRPC (ids) stream, in order. */
function idsOf(a: Attempt): number[] {
  const out: number[] = [];
  for (const m of a.received) {
    if (/^\d+$/.test(m)) {
      out.push(Number(m));
      continue;
    }
    try {
      const v = JSON.parse(m) as { round_id?: number; data?: { round_id?: number } };
      const id = v.round_id ?? v.data?.round_id;
      if (typeof id === 'number') out.push(id);
    } catch {
      // a partial SSE line or a non-round message
    }
  }
  return out;
}

/** gRPC StreamByGame from `since` (a position), collecting round ids. */
function grpcSince(since: string): { ids: number[]; close(): void } {
  const call = grpc.StreamByGame({ game_slug: 'slot', since });
  const ids: number[] = [];
  call.on('data', (m: RoundMsg) => ids.push(Number(m.round_id)));
  call.on('error', (e: ServiceError) => {
    if (e.code !== status.CANCELLED) ids.push(-1);
  });
  return { ids, close: () => call.cancel() };
}

beforeAll(async () => {
  log = await createTestLog({ AUTH_REQUIRE_GRPC: 'false' });
  edge = await startEdge(log);
  grpc = createDataStreamClient(`127.0.0.1:${edge.portOf('grpc')}`);
});

afterAll(async () => {
  for (const o of opened) o.close();
  grpc?.close();
  await edge?.stop(0);
  await log?.close();
});

describe('streams survive odd records of rounds', () => {
  it('delivers every later engine round once and in order on SSE, WebSocket and gRPC, live and resumed', async () => {
    const s = oddScenario('slot', 300);
    const { future, past, duplicate, conflict, outOfOrder } = s.odd;
    const ids = (rounds: readonly RoundFinished[]) => rounds.map((r) => r.round_id);
    const [first3, later] = [s.engine.slice(0, 3), s.engine.slice(3)];

    const live = await Promise.all(
      (['sse', 'ws', 'grpc'] as const).map((proto) => attempt(edge, proto, { path: 'slot' })),
    );
    opened.push(...live);
    await log.appendEvents(s.before);
    await waitFor('the first engine rounds on every live stream', () =>
      live.every((a) => idsOf(a).includes(first3[2]?.round_id ?? 0)) ? true : undefined,
    );
    // The position after the engine's third round, taken before the odd records are appended.
    const since = `t=${Date.now() - 1};slot=${first3[2]?.round_id}`;

    await log.appendEvents([future, past, duplicate, conflict, outOfOrder, ...s.after]);
    const lastId = later[later.length - 1]?.round_id ?? 0;
    await waitFor(
      'the engine’s last round on every live stream',
      () => (live.every((a) => idsOf(a).includes(lastId)) ? true : undefined),
      15_000,
    );
    for (const [i, a] of live.entries()) {
      const got = idsOf(a).filter((id) => id !== first3[0]?.round_id || i !== 0); // SSE's `initial` aside
      // Every engine round once, in order; the out-of-order round (admitted) in its log place.
      expect(got.slice(-later.length - 1), `live ${['sse', 'ws', 'grpc'][i]}`).toEqual([
        outOfOrder.round_id,
        ...ids(later),
      ]);
      expect(new Set(got).size, 'no round twice').toBe(got.length);
    }

    const resumed = await Promise.all([
      attempt(edge, 'sse', { path: `slot?since=${encodeURIComponent(since)}` }),
      attempt(edge, 'ws', { path: `slot?since=${encodeURIComponent(since)}` }),
    ]);
    opened.push(...resumed);
    const g = grpcSince(since);
    opened.push(g);
    await waitFor(
      'the engine’s rounds on every resumed stream',
      () => (resumed.every((a) => idsOf(a).includes(lastId)) && g.ids.includes(lastId) ? true : undefined),
      15_000,
    );
    for (const [name, got] of [
      ['sse', idsOf(resumed[0] as Attempt)],
      ['ws', idsOf(resumed[1] as Attempt)],
      ['grpc', g.ids],
    ] as const) {
      // A resume replays by round id above its position: every engine round after it, once, in order.
      expect(got, `resumed ${name}`).toEqual(ids(later));
    }

    const refused = async (reason: string) =>
      await metricValue(edge, 'edge_refused_rounds_total', { reason });
    expect(await refused('future')).toBe(1);
    expect(await refused('past')).toBe(1);
    expect(await refused('duplicate')).toBe(1);
    expect(await refused('conflict')).toBe(1);
  });

  it('an edge started after the odd records streams the engine’s rounds after them (its start-up scan skips the refused ones)', async () => {
    const s = oddScenario('double', 500);
    const { future, past, duplicate, conflict } = s.odd;
    // The newest records of the game when the edge starts are the odd ones.
    await log.appendEvents([...s.before, future, past, duplicate, conflict]);
    const late = await startEdge(log);
    opened.push({ close: () => void late.stop(0) });
    const streams = await Promise.all(
      (['sse', 'ws'] as const).map((proto) => attempt(late, proto, { path: 'double' })),
    );
    opened.push(...streams);
    await log.appendEvents(s.after);
    const later = s.engine.slice(3).map((r) => r.round_id);
    const lastId = later[later.length - 1] ?? 0;
    await waitFor(
      'the engine’s last double round on the late edge',
      () => (streams.every((a) => idsOf(a).includes(lastId)) ? true : undefined),
      15_000,
    );
    const [sse, ws] = streams.map(idsOf) as [number[], number[]];
    // SSE's `initial` is the engine's last round before the edge started, as the engine wrote it
    // (not the one from the future, nor the conflicting copy appended after it).
    expect(sse).toEqual([s.engine[2]?.round_id, ...later]);
    const initial = JSON.parse(streams[0]?.received.find((m) => m.includes('"round_id"')) ?? '{}');
    expect(initial.extras).toBe(JSON.stringify(extrasOf((s.engine[2] as RoundFinished).result)));
    expect(ws).toEqual(later);
  });
});
