import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toStreamForm } from '../../../../rules/rounds/round.ts';
import { startTestGrpc, type TestGrpc, track, unary } from '../../../../tests/support/grpc.ts';
import { until } from '../../../../tests/support/poll.ts';
import { deliveryOf, insertRounds, mkRound, T0 } from '../../../../tests/support/rounds-fixture.ts';
import type { RoundMsg } from './proto.ts';

let t: TestGrpc;

// Read-model rows: 3 crash, 2 slot, 1 double; none for wall-street.
const DB_ROUNDS = [
  mkRound('crash', 1, '1.50'),
  mkRound('slot', 2, '0.00'),
  mkRound('crash', 3, '7.20'),
  mkRound('double', 4, 'red'),
  mkRound('slot', 5, '12.00'),
  mkRound('crash', 6, '2.00'),
];

beforeAll(async () => {
  t = await startTestGrpc({ db: true });
  if (!t.sql) throw new Error('no database');
  await insertRounds(t.sql, DB_ROUNDS);
});
afterAll(async () => {
  await t?.close();
});

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code: number; details: string }) => [e.code, e.details],
  );

describe('gRPC unary RPCs', () => {
  it('ListGames reads the games table', async () => {
    const { games } = await unary(t.client.ListGames.bind(t.client), {});
    expect(games.map((g) => [g.id, g.slug, g.name, g.type])).toEqual([
      [1, 'crash', 'Crash', 'multiplier'],
      [2, 'double', 'Double', 'color'],
      [3, 'slot', 'Slot Machine', 'slots'],
      [4, 'wall-street', 'Wall Street', 'trending'],
    ]);
    expect(games[0]).toMatchObject({ last_round: 1e12 + 6, last_update: new Date(T0 + 6000).toISOString() });
    expect(games[3]?.last_round).toBeUndefined();
    expect(games[3]?.last_update).toBeUndefined();
  });

  it('GetHistory of a game: newest first, stream form, limit', async () => {
    const { rounds } = await unary(t.client.GetHistory.bind(t.client), { game_slug: 'crash', limit: 2 });
    const expected = [DB_ROUNDS[5], DB_ROUNDS[2]].map((r) =>
      toStreamForm(r as never, (r?.finished_at ?? 0) + 5),
    );
    expect(rounds).toEqual(expected);
    const all = await unary(t.client.GetHistory.bind(t.client), { game_slug: 'crash' });
    expect(all.rounds.map((r) => r.round_id)).toEqual([1e12 + 6, 1e12 + 3, 1e12 + 1]);
  });

  it('GetHistory of a type reports that type and merges its games', async () => {
    const { rounds } = await unary(t.client.GetHistory.bind(t.client), { game_type: 'multiplier' });
    expect(rounds.map((r) => [r.game_slug, r.game_type, r.round_id])).toEqual([
      ['crash', 'multiplier', 1e12 + 6],
      ['slot', 'multiplier', 3e12 + 5],
      ['crash', 'multiplier', 1e12 + 3],
      ['slot', 'multiplier', 3e12 + 2],
      ['crash', 'multiplier', 1e12 + 1],
    ]);
    expect(JSON.parse(rounds[1]?.extras ?? '')).toEqual({
      reels: ['cherry', 'bell', 'seven'],
      multiplier: '12.00',
    });
  });

  it('GetHistory refuses a bad limit, an unknown or malformed name, and no selection', async () => {
    const h = t.client.GetHistory.bind(t.client);
    const rule = 'limit must be an integer from 1 to 1000';
    expect(await codeOf(unary(h, { game_slug: 'crash', limit: 0 }))).toEqual([status.INVALID_ARGUMENT, rule]);
    expect(await codeOf(unary(h, { game_slug: 'crash', limit: 1001 }))).toEqual([
      status.INVALID_ARGUMENT,
      rule,
    ]);
    expect(await codeOf(unary(h, { game_slug: 'poker' }))).toEqual([status.NOT_FOUND, 'Game not found']);
    expect(await codeOf(unary(h, { game_slug: 'Bad Slug' }))).toEqual([
      status.INVALID_ARGUMENT,
      'Invalid game slug',
    ]);
    expect(await codeOf(unary(h, { game_type: 'dice' }))).toEqual([status.NOT_FOUND, 'Game type not found']);
    expect((await codeOf(unary(h, {})))[0]).toBe(status.INVALID_ARGUMENT);
  });

  it('GetLatest answers from the hub: NOT_FOUND before a round, then the latest stream form', async () => {
    const g = t.client.GetLatest.bind(t.client);
    expect(await codeOf(unary(g, { game_slug: 'wall-street' }))).toEqual([status.NOT_FOUND, 'No rounds yet']);
    expect(await codeOf(unary(g, { game_slug: 'nope' }))).toEqual([status.NOT_FOUND, 'Game not found']);
    expect(await codeOf(unary(g, { game_slug: '../x' }))).toEqual([
      status.INVALID_ARGUMENT,
      'Invalid game slug',
    ]);
    const d = deliveryOf(mkRound('wall-street', 100, 'up'));
    t.hub.publish(d);
    t.hub.publish(deliveryOf(mkRound('wall-street', 99, 'down'))); // a lower id: streamed, not the latest
    expect(await unary(g, { game_slug: 'wall-street' })).toEqual(
      d.streamForm({ kind: 'game', slug: 'wall-street' }),
    );
  });
});

describe('gRPC streams', () => {
  afterEach(async () => {
    // Cancellation reaches the server asynchronously; each test starts with no subscriber.
    await until(() => t.hub.size === 0, 5000, 'subscriptions removed');
  });

  /** Publishes a mixed batch of rounds then a sentinel of `sentinelGame`; returns what was published. */
  let seq = 1000;
  function publishMixed(): ReturnType<typeof deliveryOf>[] {
    const values = {
      crash: ['1.20', '3.40', '9.99'],
      slot: ['0.00', '5.00'],
      double: ['red', 'white', 'black'],
      'wall-street': ['up', 'down'],
    } as const;
    const out = [];
    for (const [game, vs] of Object.entries(values)) {
      for (const v of vs) out.push(deliveryOf(mkRound(game as 'crash', seq++, v), seq));
    }
    for (const d of out) expect(t.hub.publish(d)).toBe(true);
    return out;
  }

  it('StreamByGame delivers exactly the rounds of that game, in stream form', async () => {
    const s = track(t.client.StreamByGame({ game_slug: 'double' }));
    await s.started;
    const published = publishMixed();
    const want = published.filter((d) => d.round.game_slug === 'double');
    const got = await s.waitFor(want.length);
    expect(got).toEqual(want.map((d) => d.streamForm({ kind: 'game', slug: 'double' })));
    const more = publishMixed().filter((d) => d.round.game_slug === 'double');
    expect((await s.waitFor(want.length + more.length)).slice(want.length).map((m) => m.round_id)).toEqual(
      more.map((d) => d.round.round_id),
    );
    s.call.cancel();
  });

  it('StreamByType multiplier delivers crash and slot reported as multiplier', async () => {
    const s = track(t.client.StreamByType({ game_type: 'multiplier' }));
    await s.started;
    const want = publishMixed().filter((d) => ['crash', 'slot'].includes(d.round.game_slug));
    const got = await s.waitFor(want.length);
    expect(got).toEqual(want.map((d) => toStreamForm(d.round, d.appendedAt, 'multiplier')));
    s.call.cancel();
  });

  it('filters select by point, colour and trend', async () => {
    const point = track(t.client.StreamAll({ filter: { min_point: 3, max_point: 9.99 } }));
    const color = track(
      t.client.StreamByType({ game_type: 'color', filter: { colors: ['white', 'black'] } }),
    );
    const trend = track(t.client.StreamByGame({ game_slug: 'wall-street', filter: { trends: ['down'] } }));
    const everything = track(t.client.StreamAll({}));
    await Promise.all([point.started, color.started, trend.started, everything.started]);
    const published = publishMixed();
    await everything.waitFor(published.length);
    const values = (s: typeof point, n: number) =>
      s.waitFor(n).then((ms) => ms.map((m: RoundMsg) => Object.values(JSON.parse(m.extras)).at(-1)));
    expect(await values(point, 3)).toEqual(['3.40', '9.99', '5.00']);
    expect(await values(color, 2)).toEqual([0, 3]); // white is number 0, black 3 (the fixture)
    expect((await trend.waitFor(1)).map((m) => JSON.parse(m.extras).trending)).toEqual(['down']);
    // Nothing else arrived on the filtered streams once the unfiltered one had the whole batch.
    expect([point.messages.length, color.messages.length, trend.messages.length]).toEqual([3, 2, 1]);
    for (const s of [point, color, trend, everything]) s.call.cancel();
  });

  it.each([
    ['StreamByGame', { game_slug: 'poker' }, status.NOT_FOUND, 'Game not found'],
    ['StreamByGame', { game_slug: 'UPPER' }, status.INVALID_ARGUMENT, 'Invalid game slug'],
    ['StreamByType', { game_type: 'dice' }, status.NOT_FOUND, 'Game type not found'],
    ['StreamByType', { game_type: '' }, status.INVALID_ARGUMENT, 'Invalid game type'],
    ['StreamByGame', { game_slug: 'crash', filter: { colors: ['red'] } }, status.INVALID_ARGUMENT, undefined],
    [
      'StreamAll',
      { filter: { min_point: 5, max_point: 1 } },
      status.INVALID_ARGUMENT,
      'min_point exceeds max_point',
    ],
    ['StreamAll', { filter: { trends: ['flat'] } }, status.INVALID_ARGUMENT, undefined],
  ] as const)('%s %j is refused before streaming', async (method, req, code, details) => {
    const s = track((t.client[method] as (r: unknown) => never)(req));
    const err = await s.ended;
    expect(err.code).toBe(code);
    if (details) expect(err.details).toBe(details);
    expect(s.messages).toEqual([]);
    expect(t.hub.size).toBe(0);
  });

  it('cancelling a stream removes its subscription and the metrics follow', async () => {
    const gauge = async () =>
      (await t.metrics.subscribers.get()).values.find((v) => v.labels.protocol === 'grpc')?.value;
    const base = 0;
    const s = track(t.client.StreamAll({}));
    await s.started;
    expect(t.hub.size).toBe(base + 1);
    expect(await gauge()).toBe(base + 1);
    s.call.cancel();
    expect((await s.ended).code).toBe(status.CANCELLED);
    await until(() => t.hub.size === base, 5000, 'subscription removed');
    expect(await gauge()).toBe(base);
    const delivered = (await t.metrics.deliveries.get()).values.find((v) => v.labels.protocol === 'grpc');
    expect(delivered?.value).toBeGreaterThan(0);
  });
});
