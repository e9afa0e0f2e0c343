import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { RoundFinished } from '../../../../rules/rounds/round.ts';
import {
  createTestLog,
  metricValue,
  round,
  startEdge,
  type TestLog,
} from '../../../../tests/support/edge.ts';
import { track, unary } from '../../../../tests/support/grpc.ts';
import { until } from '../../../../tests/support/poll.ts';
import type { Edge } from '../../edge.ts';
import { createGrpcProxyTransport } from '../grpc-proxy/grpc-proxy.ts';
import { createGrpcTransport, type GrpcTransport } from './grpc.ts';
import { createDataStreamClient, type DataStreamClient } from './proto.ts';

// The gRPC transport and its proxy in a real edge: rounds appended to the log, read by the
// edge's own consumer, fed through the hub, received by a grpc-js client and through the proxy.
describe('gRPC transport in the edge (real broker)', () => {
  let log: TestLog;
  let edge: Edge;
  let grpc: GrpcTransport;
  let client: DataStreamClient;
  let seq = 0;
  const next = (slug: GameSlug) => round(slug, ++seq);
  let before: RoundFinished;

  beforeAll(async () => {
    // About delivery, not credentials (grpc-auth.int.test.ts covers AUTH_REQUIRE_GRPC=true).
    log = await createTestLog({ AUTH_REQUIRE_GRPC: 'false' });
    before = next('wall-street');
    await log.append([before]); // in the log before the edge starts
    grpc = createGrpcTransport();
    edge = await startEdge(log, [grpc, createGrpcProxyTransport(grpc)]);
    client = createDataStreamClient(grpc.address);
  });
  afterAll(async () => {
    client?.close();
    await edge?.stop(0);
    await log?.close();
  });

  it('GetLatest knows the round appended before start; streams get appended rounds', async () => {
    const latest = await unary(client.GetLatest.bind(client), { game_slug: 'wall-street' });
    expect(latest).toMatchObject({
      round_id: before.round_id,
      game_slug: 'wall-street',
      game_type: 'trending',
    });
    await expect(unary(client.GetLatest.bind(client), { game_slug: 'crash' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: 'No rounds yet',
    });

    const crash = track(client.StreamByGame({ game_slug: 'crash' }));
    const mult = track(client.StreamByType({ game_type: 'multiplier' }));
    await Promise.all([crash.started, mult.started]);
    const sse = await fetch(`http://127.0.0.1:${edge.httpPort}/grpc-proxy/stream/crash`);
    expect(sse.status).toBe(200);
    await until(() => grpc.openStreams === 3, 5000, 'the proxy opened its gRPC stream');

    const rounds = [next('crash'), next('double'), next('slot'), next('crash')];
    const appendedAt = Date.now();
    await log.append(rounds);
    const got = await crash.waitFor(2);
    expect(got.map((m) => m.round_id)).toEqual([rounds[0]?.round_id, rounds[3]?.round_id]);
    expect(got[0]).toMatchObject({ game_id: 1, game_slug: 'crash', game_type: 'multiplier' });
    const first = rounds[0]?.result;
    expect(JSON.parse(got[0]?.extras ?? '')).toEqual({
      point: first?.game === 'crash' ? first.point : 'none',
    });
    // timestamp is the log append time (docs/decisions/log-and-topics/0005-append-time-is-the-clock.md), so now − timestamp is the latency.
    expect(Math.abs((got[0]?.timestamp ?? 0) - appendedAt)).toBeLessThan(5_000);
    const m = await mult.waitFor(3);
    expect(m.map((x) => [x.game_slug, x.game_type])).toEqual([
      ['crash', 'multiplier'],
      ['slot', 'multiplier'],
      ['crash', 'multiplier'],
    ]);

    // The browser proxy relays the same two crash rounds, identical to the gRPC messages.
    const reader = sse.body?.getReader();
    let text = '';
    while ((text.match(/event: message/g) ?? []).length < 2) {
      const { value, done } = (await reader?.read()) ?? { done: true };
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const relayed = [...text.matchAll(/event: message\ndata: (.*)\n\n/g)].map((x) => JSON.parse(x[1] ?? ''));
    expect(relayed).toEqual(got);
    await reader?.cancel();

    expect(await metricValue(edge, 'edge_subscribers', { protocol: 'grpc' })).toBe(3);
    expect(await metricValue(edge, 'edge_subscribers', { protocol: 'grpc-proxy' })).toBe(1);
    expect(await metricValue(edge, 'edge_deliveries_total', { protocol: 'grpc' })).toBe(7);
    crash.call.cancel();
    mult.call.cancel();
    await until(() => grpc.openStreams === 0 && edge.hub.size === 0, 5000, 'streams closed');
    expect(await metricValue(edge, 'edge_subscribers', { protocol: 'grpc-proxy' })).toBe(0);
  });
});
