import { describe, expect, it } from 'vitest';
import { until } from '../../tests/support/poll.ts';
import { backoffDelay } from './src/backoff.ts';
import { createRoundsClient, type StateChange } from './src/client.ts';
import type { ConnectContext, ConnectionEvents, SubscribeRequest, Transport } from './src/transport.ts';
import { sseTransport } from './src/transports/sse.ts';
import type { Envelope, RecoveredInfo, StreamRound } from './src/types.ts';

/** A transport whose connections the test drives: what the client sends, and what it receives. */
function fakeTransport() {
  const conns: { ctx: ConnectContext; events: ConnectionEvents; sent: (SubscribeRequest | string)[] }[] = [];
  const transport: Transport = {
    name: 'fake',
    connect(ctx, events) {
      const c = { ctx, events, sent: [] as (SubscribeRequest | string)[] };
      conns.push(c);
      queueMicrotask(() => events.open());
      return {
        subscribe: (r) => c.sent.push(r),
        unsubscribe: (sub) => c.sent.push(`unsubscribe ${sub}`),
        close: () => {},
      };
    },
  };
  return { transport, conns, last: () => conns.at(-1) as (typeof conns)[number] };
}

const r = (rid: number, t = rid): StreamRound => ({
  round_id: rid,
  game_id: 1,
  game_slug: 'crash',
  game_type: 'multiplier',
  finished_at: '2025-01-01T00:00:00.000Z',
  extras: '{"point":"1.00"}',
  timestamp: t,
});
const pos = (rid: number) => `t=${rid};crash=${rid}`;
const round = (rid: number, extra: Partial<Extract<Envelope, { type: 'round' }>> = {}): Envelope => ({
  type: 'round',
  sub: 'game:crash',
  position: pos(rid),
  data: r(rid),
  ...extra,
});
/** One SSE event as the edge writes it. */
const sse = (event: string, id: string, data: unknown) =>
  `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;
const opened = (rid: number) => ({
  event: 'round-opened',
  game_slug: 'crash',
  game_id: 1,
  round_id: rid,
  betting_opens_at: '2025-01-01T00:00:00.000Z',
  betting_closes_at: '2025-01-01T00:00:05.000Z',
  commitment: 'ab'.repeat(32),
  chain_epoch: 1,
  chain_index: rid,
  speed: 1,
  timestamp: rid,
});
const recovered = (rid: number, replayed = 0): Envelope => ({
  type: 'recovered',
  sub: 'game:crash',
  position: pos(rid),
  data: { recovered: replayed > 0, since: null, replayed },
});

describe('RoundsClient', () => {
  it('gives each round once and in order, resumes from its position after a reconnect', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({
      baseUrl: 'http://edge',
      transport: f.transport,
      reconnect: { initialMs: 1, maxMs: 2 },
    });
    const states: StateChange[] = [];
    client.onState((s) => states.push(s));
    const got: number[] = [];
    const sub = client.subscribe({ game: 'crash' }, { latest: true, onRound: (x) => got.push(x.round_id) });
    await until(() => f.conns.length === 1 && f.last().sent.length === 1, 1000, 'subscribed');
    expect(f.last().sent[0]).toEqual({ sub: 'game:crash', latest: true, lifecycle: false });
    const c1 = f.last().events;
    c1.message(round(10, { initial: true }));
    c1.message(recovered(10));
    c1.message(round(11, { prev: 10 }));
    c1.message(round(11, { prev: 10 })); // a repeat
    expect(got).toEqual([10, 11]);
    expect(sub.position).toBe(pos(11));

    c1.close({ reason: 'closed (code 1001)' });
    await until(() => f.conns.length === 2 && f.last().sent.length === 1, 1000, 'reconnected');
    expect(f.last().sent[0]).toEqual({ sub: 'game:crash', since: pos(11), latest: false, lifecycle: false });
    const c2 = f.last().events;
    c2.message(round(11, { replay: true })); // overlaps what was given
    c2.message(round(12, { replay: true }));
    c2.message(recovered(12, 2));
    expect(got).toEqual([10, 11, 12]);
    expect(states.map((s) => s.state)).toEqual(['open', 'reconnecting', 'open']);
    expect(states[1]).toMatchObject({ attempt: 1, reason: 'closed (code 1001)' });
    client.close();
    expect(client.state).toBe('closed');
  });

  it('holds live rounds that overtake a catch-up until it is over, then gives them in order', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({ baseUrl: 'http://edge', transport: f.transport });
    const got: number[] = [];
    client.subscribe({ game: 'crash' }, { since: pos(5), onRound: (x) => got.push(x.round_id) });
    await until(() => f.last()?.sent.length === 1, 1000, 'subscribed');
    const c = f.last().events;
    c.message(round(8, { prev: 7 })); // a datagram ahead of the reliable stream
    c.message(round(6, { replay: true }));
    c.message(round(7, { replay: true }));
    expect(got).toEqual([6, 7]);
    c.message(recovered(7, 2));
    expect(got).toEqual([6, 7, 8]);
    client.close();
  });

  it('resumes a subscription that lost a round (prev or a heartbeat names one it never got)', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({ baseUrl: 'http://edge', transport: f.transport });
    const got: number[] = [];
    client.subscribe({ game: 'crash' }, { onRound: (x) => got.push(x.round_id) });
    await until(() => f.last()?.sent.length === 1, 1000, 'subscribed');
    const c = f.last();
    c.events.message(recovered(20));
    c.events.message(round(22, { prev: 21 })); // 21 was lost
    expect(got).toEqual([]);
    expect(c.sent.slice(1)).toEqual([
      'unsubscribe game:crash',
      { sub: 'game:crash', since: pos(20), latest: false, lifecycle: false },
    ]);
    c.events.message(round(21, { replay: true }));
    c.events.message(round(22, { replay: true }));
    c.events.message(recovered(22, 2));
    c.events.message({ type: 'heartbeat', sub: 'game:crash', position: pos(23), data: {} }); // 23 lost too
    expect(c.sent.at(-1)).toEqual({ sub: 'game:crash', since: pos(22), latest: false, lifecycle: false });
    expect(got).toEqual([21, 22]);
    client.close();
  });

  it('reports a refusal once and does not retry it; retries a subscription the edge could not start', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({ baseUrl: 'http://edge', transport: f.transport });
    const errors: number[] = [];
    client.subscribe({ game: 'roulette' }, { onError: (e) => errors.push(e.status) });
    client.subscribe({ game: 'crash' }, {});
    await until(() => f.last()?.sent.length === 2, 1000, 'subscribed');
    const c = f.last();
    c.events.message({
      type: 'error',
      sub: 'game:roulette',
      position: null,
      data: { status: 404, error: 'Game not found' },
    });
    c.events.message({
      type: 'error',
      sub: 'game:crash',
      position: null,
      data: { status: 503, error: 'Resume failed' },
    });
    expect(errors).toEqual([404]);
    await until(() => c.sent.length === 3, 3000, 'crash asked again');
    expect(c.sent[2]).toMatchObject({ sub: 'game:crash' });
    client.close();
  });

  it('over SSE, keeps resuming after a stream whose lifecycle event had a made-up id and a heartbeat after it', async () => {
    // The edge as it was found: a lifecycle event with a random UUID as its id (better-sse's own),
    // then a heartbeat, then the stream ends; a since= of that id is answered 400.
    const streams: URLSearchParams[] = [];
    const fetch = (async (url: URL) => {
      const q = new URL(String(url)).searchParams;
      streams.push(q);
      const since = q.get('since');
      if (since !== null && !since.startsWith('t='))
        return new Response(JSON.stringify({ error: 'Invalid position: no t=<ms>', success: false }), {
          status: 400,
        });
      const from = since === null ? 10 : Number(since.split('crash=')[1]);
      let text = since === null ? sse('initial', pos(10), r(10)) : '';
      text += sse('recovered', pos(from), { recovered: since !== null, since, replayed: 0 });
      text += sse('message', pos(from + 1), r(from + 1));
      if (since === null)
        text += `event: round-opened\nid: 3f2c1a9e-8d6b-4c1e-9a57-0b7d2e4f6a18\ndata: ${JSON.stringify(opened(12))}\n\n: heartbeat\n\n`;
      // The first stream ends (a drop); a resumed one stays open.
      const bytes = new TextEncoder().encode(text);
      return new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(bytes);
            if (since === null) c.close();
          },
        }),
        { status: 200 },
      );
    }) as unknown as typeof globalThis.fetch;
    const client = createRoundsClient({
      baseUrl: 'http://edge',
      transport: sseTransport({ fetch }),
      reconnect: { initialMs: 1, maxMs: 2 },
    });
    const got: number[] = [];
    const errors: unknown[] = [];
    client.subscribe(
      { game: 'crash' },
      { lifecycle: true, onRound: (x) => got.push(x.round_id), onError: (e) => errors.push(e) },
    );
    await until(() => got.length >= 2, 2000, 'the second stream');
    client.close();
    expect(streams[1]?.get('since')).toBe(pos(11));
    expect(got).toEqual([11, 12]);
    expect(errors).toEqual([]);
  });

  it('resumes from the last valid position when the server refuses its position, and tells nothing is lost', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({
      baseUrl: 'http://edge',
      transport: f.transport,
      reconnect: { initialMs: 1, maxMs: 2 },
    });
    const got: number[] = [];
    const infos: RecoveredInfo[] = [];
    const errors: unknown[] = [];
    const sub = client.subscribe(
      { game: 'crash' },
      {
        onRound: (x) => got.push(x.round_id),
        onRecovered: (i) => infos.push(i),
        onError: (e) => errors.push(e),
      },
    );
    await until(() => f.last()?.sent.length === 1, 1000, 'subscribed');
    f.last().events.message(recovered(10));
    f.last().events.message(round(11, { prev: 10 }));
    // A heartbeat's position, of a form the client takes, that this server will not.
    const odd = 't=11;crash=11;slot=0';
    f.last().events.message({ type: 'heartbeat', sub: 'game:crash', position: odd, data: {} });
    // And an id that is no position at all (an SSE event's made-up id) is not taken.
    f.last().events.message({ type: 'heartbeat', sub: 'game:crash', position: 'a9e1-4c', data: {} });
    expect(sub.position).toBe(odd);
    f.last().events.close({ reason: 'dropped' });
    await until(() => f.conns.length === 2 && f.last().sent.length === 1, 1000, 'reconnected');
    const c = f.last();
    expect(c.sent[0]).toMatchObject({ since: odd });
    c.events.message({
      type: 'error',
      sub: 'game:crash',
      position: null,
      data: {
        status: 400,
        error: 'Invalid position: slot is not part of this subscription',
        op: 'subscribe',
      },
    });
    expect(c.sent[1]).toEqual({ sub: 'game:crash', since: pos(11), latest: false, lifecycle: false });
    c.events.message(round(12, { replay: true }));
    c.events.message({
      type: 'recovered',
      sub: 'game:crash',
      position: pos(12),
      data: { recovered: true, since: pos(11), replayed: 1 },
    });
    c.events.message(round(13, { prev: 12 }));
    expect(got).toEqual([11, 12, 13]);
    expect(infos.at(-1)).toEqual({ recovered: true, since: pos(11), replayed: 1 });
    expect(errors).toEqual([]);
    client.close();
  });

  it('starts live when its only position is refused, reports recovered false with the reason, and goes on', async () => {
    const f = fakeTransport();
    const client = createRoundsClient({
      baseUrl: 'http://edge',
      transport: f.transport,
      reconnect: { initialMs: 1, maxMs: 2 },
    });
    const got: number[] = [];
    const infos: RecoveredInfo[] = [];
    const errors: unknown[] = [];
    client.subscribe(
      { game: 'crash' },
      {
        since: 'nonsense',
        onRound: (x) => got.push(x.round_id),
        onRecovered: (i) => infos.push(i),
        onError: (e) => errors.push(e),
      },
    );
    await until(() => f.last()?.sent.length === 1, 1000, 'subscribed');
    const c = f.last();
    expect(c.sent[0]).toMatchObject({ since: 'nonsense' });
    c.events.message({
      type: 'error',
      sub: 'game:crash',
      position: null,
      data: { status: 400, error: 'Invalid position: no t=<ms>', op: 'subscribe' },
    });
    expect(c.sent[1]).toEqual({ sub: 'game:crash', latest: false, lifecycle: false });
    c.events.message(recovered(20));
    c.events.message(round(21, { prev: 20 }));
    expect(infos).toEqual([
      {
        recovered: false,
        since: 'nonsense',
        replayed: 0,
        reason: 'position refused: Invalid position: no t=<ms>',
      },
    ]);
    expect(got).toEqual([21]);
    expect(errors).toEqual([]);
    // Later reconnects resume from the positions the server gave.
    c.events.close({ reason: 'dropped' });
    await until(() => f.conns.length === 2 && f.last().sent.length === 1, 1000, 'reconnected');
    expect(f.last().sent[0]).toMatchObject({ since: pos(21) });
    // Refused too, with no other valid position: live again; a refusal of that live start is
    // the subscription's own, reported and not retried.
    f.last().events.message({
      type: 'error',
      sub: 'game:crash',
      position: null,
      data: { status: 400, error: 'Invalid position: the log was reset', op: 'subscribe' },
    });
    expect(f.last().sent[1]).toEqual({ sub: 'game:crash', latest: false, lifecycle: false });
    f.last().events.message({
      type: 'error',
      sub: 'game:crash',
      position: null,
      data: { status: 400, error: 'Bad', op: 'subscribe' },
    });
    expect(f.last().sent).toHaveLength(2);
    expect(errors).toEqual([{ status: 400, error: 'Bad', op: 'subscribe' }]);
    client.close();
  });

  it('gets a fresh token for each connection from the key', async () => {
    const f = fakeTransport();
    const asked: string[] = [];
    let n = 0;
    const fetch = (async (url: string, init: RequestInit) => {
      asked.push(`${init.method} ${url} ${(init.headers as Record<string, string>)['X-API-Key']}`);
      return new Response(JSON.stringify({ token: `tok_${++n}` }), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const client = createRoundsClient({
      baseUrl: ['http://a', 'http://b'],
      transport: f.transport,
      credentials: { apiKey: 'pk_live_x' },
      fetch,
      reconnect: { initialMs: 1, maxMs: 2 },
    });
    client.subscribe({ game: 'crash' }, {});
    await until(() => f.conns.length === 1, 1000, 'connected');
    f.last().events.close({ reason: 'gone' });
    await until(() => f.conns.length === 2, 1000, 'reconnected');
    expect(f.conns.map((c) => [c.ctx.baseUrl, c.ctx.credential])).toEqual([
      ['http://a', 'tok_1'],
      ['http://b', 'tok_2'],
    ]);
    expect(asked).toEqual([
      'POST http://a/api/auth/token pk_live_x',
      'POST http://b/api/auth/token pk_live_x',
    ]);
    client.close();
  });
});

describe('backoffDelay', () => {
  it('doubles up to the maximum, with up to half of it random', () => {
    expect(backoffDelay(1, {}, () => 0)).toBe(250);
    expect(backoffDelay(1, {}, () => 1)).toBe(500);
    expect(backoffDelay(3, {}, () => 0)).toBe(1000);
    expect(backoffDelay(20, { maxMs: 15_000 }, () => 1)).toBe(15_000);
  });
});
