import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import { type RoundFinished, type StreamRound, toStreamForm } from '../../../../rules/rounds/round.ts';
import {
  createTestLog,
  metricValue,
  round,
  startEdge,
  type TestLog,
} from '../../../../tests/support/edge.ts';
import { until } from '../../../../tests/support/poll.ts';
import { openSse, type SseClient } from '../../../../tests/support/sse-client.ts';
import type { Edge } from '../../edge.ts';
import { createSseTransport } from './sse.ts';

const data = (c: SseClient) => c.named().map((e) => JSON.parse(e.data as string) as StreamRound);

describe('SSE transport (real broker)', () => {
  let log: TestLog;
  let edge: Edge;
  let seq = 0;
  const next = (slug: GameSlug, pad = 0) => round(slug, ++seq, pad);
  const opened: SseClient[] = [];
  const open = async (path: string, headers: Record<string, string> = {}, e = edge) => {
    const c = await openSse(e.httpPort, path, headers);
    opened.push(c);
    return c;
  };
  let before: RoundFinished[];

  beforeAll(async () => {
    log = await createTestLog({ EDGE_SSE_HEARTBEAT_MS: 200, EDGE_SSE_MAX_BUFFER_BYTES: 512 * 1024 });
    // Appended before the edge starts: `initial` must come from the log tail.
    before = [next('crash'), next('slot'), next('double')];
    await log.append(before);
    edge = await startEdge(log, [createSseTransport()]);
  });
  afterAll(async () => {
    for (const c of opened) c.close();
    await edge?.stop(0);
    await log?.close();
  });

  it('answers with the seed headers, `initial` from the log tail, messages with ids, heartbeats', async () => {
    const c = await open('/sse/crash');
    expect(c.res.statusCode).toBe(200);
    expect(c.res.headers['content-type']).toBe('text/event-stream');
    expect(c.res.headers['cache-control']).toBe('no-cache');
    expect(c.res.headers.connection).toBe('keep-alive');
    expect(c.res.headers['transfer-encoding']).toBe('chunked');
    expect(c.res.headers['access-control-allow-origin']).toBe('*');
    await until(() => c.named().length === 1, 10_000, 'initial');
    const [initial] = c.named();
    expect(initial?.event).toBe('initial');
    const crash0 = before[0] as RoundFinished;
    const first = JSON.parse(initial?.data as string) as StreamRound;
    expect({ ...first, timestamp: 0 }).toEqual({ ...toStreamForm(crash0, 0), timestamp: 0 });
    expect(initial?.id).toBe(`t=${first.timestamp};crash=${crash0.round_id}`);

    const [crash1, double1] = [next('crash'), next('double')];
    await log.append([crash1, double1]);
    await until(() => c.named().length === 2, 10_000, 'message');
    const msg = c.named()[1];
    expect(msg?.event).toBe('message');
    const m = JSON.parse(msg?.data as string) as StreamRound;
    expect(m).toMatchObject({ round_id: crash1.round_id, game_slug: 'crash', game_type: 'multiplier' });
    expect(msg?.id).toBe(`t=${m.timestamp};crash=${crash1.round_id}`);
    // The seed's wire form: `event: <name>`, `data: <json>`, `: heartbeat`.
    expect(c.raw).toContain(`\nevent: message\nid: ${msg?.id}\ndata: ${msg?.data}\n\n`);
    await until(() => /(^|\n): heartbeat\n\n/.test(c.raw), 5_000, 'heartbeat');
    expect(c.events.filter((e) => e.comments.includes('heartbeat')).length).toBeGreaterThan(0);
    expect(c.named().length).toBe(2);
  });

  it('gives a type subscription the newest round of its games as `initial`; none when no round exists', async () => {
    const slot = next('slot');
    await log.append([slot]);
    await until(
      () => edge.hub.latest({ kind: 'game', slug: 'slot' })[0]?.round.round_id === slot.round_id,
      10_000,
      'slot in hub',
    );
    const mult = await open('/sse/type/multiplier');
    await until(() => mult.named().length === 1, 10_000, 'initial');
    expect(mult.named()[0]?.event).toBe('initial');
    expect(data(mult)[0]).toMatchObject({
      round_id: slot.round_id,
      game_slug: 'slot',
      game_type: 'multiplier',
    });

    const ws = await open('/sse/wall-street');
    await new Promise((r) => setTimeout(r, 300));
    expect(ws.named()).toEqual([]);
    const w = next('wall-street');
    await log.append([w]);
    await until(() => ws.named().length === 1, 10_000, 'first wall-street round');
    expect(ws.named()[0]?.event).toBe('message');
    expect(data(ws)[0]?.round_id).toBe(w.round_id);
  });

  it('refuses unknown or malformed subscriptions with JSON before any stream', async () => {
    const cases: [string, number, string][] = [
      ['/sse/roulette', 404, 'Game not found'],
      ['/sse/type/wheel', 404, 'Game type not found'],
      ['/sse/Bad!', 400, 'Invalid game slug'],
      ['/sse/type/NOPE', 400, 'Invalid game type'],
      ['/sse/crash/extra', 404, 'Not found'],
    ];
    for (const [path, status, error] of cases) {
      const res = await fetch(`http://127.0.0.1:${edge.httpPort}${path}`, {
        headers: { Accept: 'text/event-stream' },
      });
      expect([path, res.status]).toEqual([path, status]);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual({ error, success: false });
    }
    const pre = await fetch(`http://127.0.0.1:${edge.httpPort}/sse/crash`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://elsewhere.example', 'Access-Control-Request-Headers': 'last-event-id' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Last-Event-ID/);
  });

  it('closes a client that never reads at the buffer limit; others get every round', async () => {
    const stuck = await open('/sse/slot');
    const healthy = await open('/sse/slot');
    await until(() => stuck.named().length === 1 && healthy.named().length === 1, 10_000, 'initials');
    stuck.res.pause();
    stuck.res.socket.pause();
    const slow0 = await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'sse' });
    const sent: number[] = [];
    // ~40 KB rounds, 80 KB per append: a reading client stays far under the 512 KiB limit even on
    // a loaded machine, while the stuck one's kernel buffers fill and then its queue passes the limit.
    for (let i = 0; i < 400; i++) {
      const batch = [next('slot', 40_000), next('slot', 40_000)];
      await log.append(batch);
      sent.push(...batch.map((b) => b.round_id));
      if ((await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'sse' })) > slow0) break;
    }
    await until(() => healthy.named().length === sent.length + 1, 30_000, 'healthy gets every round');
    expect(await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'sse' })).toBe(slow0 + 1);
    expect(
      data(healthy)
        .slice(1)
        .map((r) => r.round_id),
    ).toEqual(sent);
    stuck.res.socket.resume();
    stuck.res.resume();
    await until(() => stuck.ended, 10_000, 'stuck stream ends');
    expect(stuck.named().length).toBeLessThan(sent.length + 1);
  });

  it('serves /health, /ready and /metrics with subscriber and delivery counts', async () => {
    expect((await fetch(`http://127.0.0.1:${edge.httpPort}/health`)).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${edge.httpPort}/ready`);
    expect(ready.status).toBe(200);
    const text = await (await fetch(`http://127.0.0.1:${edge.httpPort}/metrics`)).text();
    expect(text).toMatch(/edge_subscribers\{protocol="sse"[^}]*\} \d+/);
    expect(text).toMatch(/edge_deliveries_total\{protocol="sse"[^}]*\} [1-9]/);
  });

  it('drains on stop: ends every stream within the window, then refuses connections', async () => {
    const log2 = await createTestLog();
    const e2 = await startEdge(log2, [createSseTransport()]);
    const port = e2.httpPort;
    const cs = await Promise.all([1, 2, 3].map(() => openSse(port, '/sse/type/color')));
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await e2.stop(300);
    await until(() => cs.every((c) => c.ended), 5_000, 'streams ended');
    expect(Date.now() - t0).toBeLessThan(3_000);
    await expect(fetch(`http://127.0.0.1:${port}/sse/crash`)).rejects.toThrow();
    await log2.close();
  });
});
