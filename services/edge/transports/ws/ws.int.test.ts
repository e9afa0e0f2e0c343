import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { StreamRound } from '../../../../rules/rounds/round.ts';
import { testKey } from '../../../../tests/support/credentials.ts';
import {
  createTestLog,
  metricValue,
  round,
  startEdge,
  type TestLog,
  untilKey,
} from '../../../../tests/support/edge.ts';
import { until } from '../../../../tests/support/poll.ts';
import type { Edge } from '../../edge.ts';
import { createWsTransport, DRAIN_CLOSE, MAX_PAYLOAD_BYTES, SLOW_CLOSE, TOO_BIG_CLOSE } from './ws.ts';

interface Client {
  readonly ws: WebSocket;
  readonly frames: string[];
  readonly binary: number;
  closed?: { code: number; reason: string };
}

function connect(edge: Edge, path: string, protocols?: string[]): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${edge.portOf('ws')}${path}`, protocols);
  const c: Client & { binary: number } = { ws, frames: [], binary: 0 };
  ws.on('message', (data, isBinary) => {
    if (isBinary) c.binary++;
    else c.frames.push(data.toString());
  });
  ws.on('close', (code, reason) => {
    c.closed = { code, reason: reason.toString() };
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(c));
    ws.once('error', reject);
  });
}

/** Status and body of a refused upgrade. */
function refused(edge: Edge, path: string): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(`ws://127.0.0.1:${edge.portOf('ws')}${path}`);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error(`${path} was upgraded`)));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', () => {});
  });
}

const parse = (frames: string[]) => frames.map((f) => JSON.parse(f) as StreamRound);

describe('WebSocket transport (real broker)', () => {
  let log: TestLog;
  let edge: Edge;
  let seq = 0;
  const next = (slug: GameSlug, pad = 0) => round(slug, ++seq, pad);

  beforeAll(async () => {
    log = await createTestLog({ EDGE_WS_MAX_BUFFER_BYTES: 64 * 1024, EDGE_WS_IDLE_TIMEOUT_S: 8 });
    edge = await startEdge(log, [createWsTransport()]);
  });
  afterAll(async () => {
    await edge?.stop(0);
    await log?.close();
  });

  it('sends exactly one text frame per round, in stream form, by game and by type', async () => {
    const crash = await connect(edge, '/ws/crash');
    const multiplier = await connect(edge, '/ws/type/multiplier');
    const color = await connect(edge, '/ws/type/color');
    const rounds = [
      next('crash'),
      next('double'),
      next('slot'),
      next('wall-street'),
      next('crash'),
      next('slot'),
    ];
    await log.append(rounds);
    await until(
      () => multiplier.frames.length >= 4 && crash.frames.length >= 2 && color.frames.length >= 1,
      10_000,
      'frames',
    );
    // A later round proves nothing else was queued in between.
    const marker = next('crash');
    await log.append([marker]);
    await until(() => crash.frames.length >= 3 && multiplier.frames.length >= 5, 10_000, 'marker');

    const c = parse(crash.frames);
    expect(c.map((r) => r.round_id)).toEqual([rounds[0]?.round_id, rounds[4]?.round_id, marker.round_id]);
    expect(Object.keys(c[0] as object).sort()).toEqual(
      ['extras', 'finished_at', 'game_id', 'game_slug', 'game_type', 'round_id', 'timestamp'].sort(),
    );
    expect(c[0]).toMatchObject({ game_id: 1, game_slug: 'crash', game_type: 'multiplier' });
    expect(JSON.parse(c[0]?.extras as string)).toEqual({
      point: (rounds[0]?.result as { point?: string } | undefined)?.point,
    });
    expect(Math.abs((c[0]?.timestamp as number) - Date.now())).toBeLessThan(60_000);

    const m = parse(multiplier.frames);
    expect(m.map((r) => r.game_slug)).toEqual(['crash', 'slot', 'crash', 'slot', 'crash']);
    expect(new Set(m.map((r) => r.game_type))).toEqual(new Set(['multiplier']));
    expect(parse(color.frames).map((r) => [r.round_id, r.game_type])).toEqual([
      [rounds[1]?.round_id, 'color'],
    ]);
    expect(crash.binary + multiplier.binary + color.binary).toBe(0);
    for (const x of [crash, multiplier, color]) x.ws.close();
  });

  it('counts a round published to a topic once per socket it reached', async () => {
    const clients = await Promise.all([1, 2, 3].map(() => connect(edge, '/ws/type/trending')));
    const before = await metricValue(edge, 'edge_deliveries_total', { protocol: 'ws' });
    await log.append([next('wall-street')]);
    await until(() => clients.every((c) => c.frames.length === 1), 10_000, 'one round each');
    expect(await metricValue(edge, 'edge_deliveries_total', { protocol: 'ws' })).toBe(before + 3);
    for (const c of clients) c.ws.close();
  });

  it('resumes while rounds keep coming: the missed ones, then live, each once and in order', async () => {
    const live = await connect(edge, '/ws/double');
    const first = [next('double'), next('double')];
    await log.append(first);
    await until(() => live.frames.length === 2, 10_000, 'first rounds');
    const [seen] = parse(live.frames);
    const since = `t=${seen?.timestamp};double=${seen?.round_id}`;
    const later = Array.from({ length: 30 }, () => next('double'));
    // Appends go on while the resumed socket catches up and switches to its topic.
    const appending = (async () => {
      for (const r of later) await log.append([r]);
    })();
    const resumed = await connect(edge, `/ws/double?since=${encodeURIComponent(since)}`);
    await appending;
    const want = [first[1], ...later].map((r) => r?.round_id);
    await until(() => resumed.frames.length >= want.length, 10_000, 'every round after the position');
    await log.append([next('crash')]); // a round elsewhere: time for a stray repeat to show
    await until(() => live.frames.length === 32, 10_000, 'live got them all');
    expect(parse(resumed.frames).map((r) => r.round_id)).toEqual(want);
    live.ws.close();
    resumed.ws.close();
  });

  it('skips an undecodable record (counted) and goes on delivering', async () => {
    const c = await connect(edge, '/ws/crash');
    const skipped = await metricValue(edge, 'edge_undecodable_records_total');
    await log.appendGarbage();
    const r = next('crash');
    await log.append([r]);
    await until(() => parse(c.frames).some((f) => f.round_id === r.round_id), 10_000, 'round after garbage');
    // A round of the previous test may still reach the edge after this socket joined: live, so sent.
    const ids = parse(c.frames).map((f) => f.round_id);
    expect(ids.at(-1)).toBe(r.round_id);
    expect(ids.every((id) => id <= r.round_id)).toBe(true);
    expect(await metricValue(edge, 'edge_undecodable_records_total')).toBe(skipped + 1);
    c.ws.close();
  });

  it('refuses unknown and malformed paths before the upgrade', async () => {
    expect(await refused(edge, '/ws/roulette')).toEqual({
      status: 404,
      body: JSON.stringify({ error: 'Game not found', success: false }),
    });
    expect((await refused(edge, '/ws/type/wheel')).status).toBe(404);
    expect(await refused(edge, '/ws/Crash!')).toEqual({
      status: 400,
      body: JSON.stringify({ error: 'Invalid game slug', success: false }),
    });
    expect((await refused(edge, '/ws/type/BAD_TYPE')).status).toBe(400);
    expect((await refused(edge, '/ws/crash/extra')).status).toBe(404);
    expect((await refused(edge, '/elsewhere')).status).toBe(404);
    const plain = await fetch(`http://127.0.0.1:${edge.portOf('ws')}/ws/crash`);
    expect(plain.status).toBe(426);
  });

  it('echoes the first requested subprotocol (the token) and accepts none', async () => {
    const key = testKey();
    await log.appendKey({ type: 'KeyCreated', value: key.event });
    await untilKey(edge, key.keyId, 'live');
    const token = key.token(log.tokenSecret);
    const withToken = await connect(edge, '/ws/crash', [token, 'other']);
    expect(withToken.ws.protocol).toBe(token);
    const without = await connect(edge, '/ws/crash');
    expect(without.ws.protocol).toBe('');
    withToken.ws.close();
    without.ws.close();
  });

  it('ignores client frames, and closes only the sender of an oversized one', async () => {
    const chatty = await connect(edge, '/ws/double');
    const bystander = await connect(edge, '/ws/double');
    chatty.ws.send('hello');
    chatty.ws.send(Buffer.from([1, 2, 3]));
    const r = next('double');
    await log.append([r]);
    await until(
      () => chatty.frames.length === 1 && bystander.frames.length === 1,
      10_000,
      'round after chatter',
    );
    expect(chatty.closed).toBeUndefined();

    chatty.ws.send('x'.repeat(MAX_PAYLOAD_BYTES + 1));
    await until(() => chatty.closed !== undefined, 10_000, 'oversized close');
    expect(chatty.closed).toEqual({ code: TOO_BIG_CLOSE.code, reason: TOO_BIG_CLOSE.reason });
    const huge = await connect(edge, '/ws/double');
    huge.ws.send('x'.repeat(200_000));
    await until(() => huge.closed !== undefined, 10_000, 'huge frame drop');
    expect(huge.closed?.code).toBe(1006);
    const r2 = next('double');
    await log.append([r2]);
    await until(() => bystander.frames.length === 2, 10_000, 'bystander still served');
    expect(parse(bystander.frames).map((x) => x.round_id)).toEqual([r.round_id, r2.round_id]);
    bystander.ws.close();
  });

  it('closes a subscriber that never reads at the buffer limit; others get every round', async () => {
    const stuck = await connect(edge, '/ws/slot');
    const healthy = await connect(edge, '/ws/slot');
    (stuck.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const before = await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'ws' });
    const sent: number[] = [];
    // ~100 KB rounds until the kernel buffers are full and the edge's own limit (64 KiB) is passed.
    for (let i = 0; i < 60; i++) {
      const batch = [
        next('slot', 100_000),
        next('slot', 100_000),
        next('slot', 100_000),
        next('slot', 100_000),
      ];
      await log.append(batch);
      sent.push(...batch.map((b) => b.round_id));
      if ((await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'ws' })) > before) break;
    }
    await until(() => healthy.frames.length === sent.length, 30_000, 'healthy subscriber gets every round');
    expect(await metricValue(edge, 'edge_slow_subscriber_closes_total', { protocol: 'ws' })).toBe(before + 1);
    expect(parse(healthy.frames).map((r) => r.round_id)).toEqual(sent);
    (stuck.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(() => stuck.closed !== undefined, 15_000, 'stuck client sees the close');
    // It reads what was queued before the limit, then the close frame.
    expect(stuck.closed).toEqual({ code: SLOW_CLOSE.code, reason: SLOW_CLOSE.reason });
    expect(stuck.frames.length).toBeLessThan(sent.length);
    healthy.ws.close();
  });

  it('pings an idle subscriber before the idle timeout, which answers and stays open', async () => {
    const idle = await connect(edge, '/ws/wall-street');
    let pings = 0;
    idle.ws.on('ping', () => pings++);
    await until(() => pings > 0, 12_000, 'a server ping');
    expect(idle.closed).toBeUndefined();
    idle.ws.close();
  }, 20_000);

  it('drains on stop: stops accepting, closes every socket with 1001 over the window', async () => {
    const log2 = await createTestLog();
    const edge2 = await startEdge(log2, [createWsTransport()]);
    const port = edge2.portOf('ws');
    const clients = await Promise.all([1, 2, 3, 4].map(() => connect(edge2, '/ws/type/trending')));
    const closedAt: number[] = [];
    for (const c of clients) c.ws.on('close', () => closedAt.push(Date.now()));
    const t0 = Date.now();
    await edge2.stop(400);
    await until(() => clients.every((c) => c.closed), 5_000, 'drain closes');
    expect(clients.map((c) => c.closed?.code)).toEqual(Array(4).fill(DRAIN_CLOSE.code));
    // Spread: the last close comes well after the first, within the window (+ slack).
    expect(Math.max(...closedAt) - Math.min(...closedAt)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...closedAt) - t0).toBeLessThan(2_000);
    const late = new WebSocket(`ws://127.0.0.1:${port}/ws/crash`);
    await expect(
      new Promise((resolve, reject) => {
        late.once('open', resolve);
        late.once('error', reject);
      }),
    ).rejects.toThrow(/ECONNREFUSED/);
    await log2.close();
  });
});
