/**
 * The rounds endpoints against a real Postgres: given these read-model rows (written as the
 * projector writes them), then these responses; and every bad input of the issue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertRounds,
  type RoundFixture,
  roundId,
  startTestApi,
  type TestApi,
} from '../../../tests/support/api.ts';
import { LIMIT_RULE } from './input.ts';

const T0 = Date.parse('2025-01-02T03:04:05.000Z');
const S = 1000;

// 25 crash rounds every 10 s; 3 slot rounds interleaved; 2 double rounds; wall-street has none.
const crash: RoundFixture[] = Array.from({ length: 25 }, (_, i) => ({
  game: 'crash',
  seq: i + 1,
  finishedAt: T0 + i * 10 * S,
  value: (1 + i / 10).toFixed(2),
  extras: { point: (1 + i / 10).toFixed(2) },
}));
const slot: RoundFixture[] = [1, 2, 3].map((seq) => ({
  game: 'slot',
  seq,
  finishedAt: T0 + seq * 10 * S + 5 * S,
  value: `${seq}.50`,
  extras: { reels: ['cherry', 'bell', 'seven'], multiplier: `${seq}.50` },
}));
const double: RoundFixture[] = [
  { game: 'double', seq: 1, finishedAt: T0, value: 'red', extras: { color: 'red', number: 3 } },
  // Same finish time as seq 1: ties are ordered by round_id, newest first.
  { game: 'double', seq: 2, finishedAt: T0, value: 'white', extras: { color: 'white', number: 0 } },
];
const lastCrash = crash[24] as RoundFixture;

let t: TestApi;
const get = (url: string) => t.app.inject({ method: 'GET', url });

beforeAll(async () => {
  // A high limit: this file tests data and input, app.int.test.ts the rate limit.
  t = await startTestApi({ RATE_LIMIT_MAX: 10_000 });
  await insertRounds(t.sql, [...crash, ...slot, ...double]);
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/games', () => {
  it('lists the four games in catalogue order with their last round', async () => {
    const res = await get('/api/games');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual([
      {
        slug: 'crash',
        name: 'Crash',
        type: 'multiplier',
        last_round: roundId('crash', 25),
        last_update: new Date(lastCrash.finishedAt).toISOString(),
      },
      {
        slug: 'double',
        name: 'Double',
        type: 'color',
        last_round: roundId('double', 2),
        last_update: new Date(T0).toISOString(),
      },
      {
        slug: 'slot',
        name: 'Slot Machine',
        type: 'slots',
        last_round: roundId('slot', 3),
        last_update: new Date(T0 + 35 * S).toISOString(),
      },
      { slug: 'wall-street', name: 'Wall Street', type: 'trending', last_round: null, last_update: null },
    ]);
  });
});

describe('GET /api/latest/:game', () => {
  it('returns the newest round in REST form plus the stream-form fields', async () => {
    const res = await get('/api/latest/crash');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      game_slug: 'crash',
      game_type: 'multiplier',
      finished_at: new Date(lastCrash.finishedAt).toISOString(),
      value: '3.40',
      round_id: roundId('crash', 25),
      game_id: 1,
      extras: JSON.stringify({ point: '3.40' }),
      timestamp: lastCrash.finishedAt + 5,
    });
  });

  it('carries extras as a JSON string that parses to the per-game fields', async () => {
    const body = (await get('/api/latest/slot')).json();
    expect(typeof body.extras).toBe('string');
    expect(JSON.parse(body.extras)).toEqual({ reels: ['cherry', 'bell', 'seven'], multiplier: '3.50' });
    expect(body.game_type).toBe('slots');
  });

  it('breaks a tie on finish time by round id', async () => {
    const body = (await get('/api/latest/double')).json();
    expect(body.round_id).toBe(roundId('double', 2));
    expect(JSON.parse(body.extras)).toEqual({ color: 'white', number: 0 });
  });

  it('answers 404 "No rounds yet" for a known game without rounds', async () => {
    const res = await get('/api/latest/wall-street');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No rounds yet', success: false });
  });
});

describe('GET /api/history/:game', () => {
  it('returns REST-form rows with round_id, newest first, 500 by default', async () => {
    const res = await get('/api/history/crash');
    expect(res.statusCode).toBe(200);
    const rows = res.json();
    expect(rows).toHaveLength(25);
    expect(rows[0]).toEqual({
      round_id: roundId('crash', 25),
      game_slug: 'crash',
      game_type: 'multiplier',
      finished_at: new Date(lastCrash.finishedAt).toISOString(),
      value: '3.40',
    });
    expect(rows.map((r: { round_id: number }) => r.round_id)).toEqual(
      crash.map((c) => roundId('crash', c.seq)).reverse(),
    );
  });

  it.each([
    [1, [25]],
    [3, [25, 24, 23]],
    [1000, crash.map((c) => c.seq).reverse()],
  ])('honours limit=%i', async (limit, seqs) => {
    const rows = (await get(`/api/history/crash?limit=${limit}`)).json();
    expect(rows.map((r: { round_id: number }) => r.round_id)).toEqual(seqs.map((s) => roundId('crash', s)));
  });

  it('orders equal finish times by round id, newest first', async () => {
    const rows = (await get('/api/history/double')).json();
    expect(rows.map((r: { value: string }) => r.value)).toEqual(['white', 'red']);
  });

  it('returns an empty array for a game without rounds', async () => {
    expect((await get('/api/history/wall-street?limit=5')).json()).toEqual([]);
  });

  it('refuses unknown query parameters, naming the first (services/api/input-policy.ts)', async () => {
    const res = await get('/api/history/crash?limit=2&foo=bar&sort=asc');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'foo: unknown query parameter', success: false });
    expect((await get('/api/games?verbose=1')).statusCode).toBe(400);
  });
});

describe('GET /api/history/type/:type', () => {
  it('merges every game of the type newest first, game_type reading the requested type', async () => {
    const rows = (await get('/api/history/type/multiplier?limit=6')).json();
    // crash every 10 s from T0; slot at T0 + 15, 25, 35 s.
    expect(rows.map((r: { game_slug: string; round_id: number }) => [r.game_slug, r.round_id])).toEqual([
      ['crash', roundId('crash', 25)],
      ['crash', roundId('crash', 24)],
      ['crash', roundId('crash', 23)],
      ['crash', roundId('crash', 22)],
      ['crash', roundId('crash', 21)],
      ['crash', roundId('crash', 20)],
    ]);
    const all = (await get('/api/history/type/multiplier')).json();
    expect(all).toHaveLength(28);
    const slotRow = all.find((r: { game_slug: string }) => r.game_slug === 'slot');
    expect(slotRow).toEqual({
      round_id: roundId('slot', 3),
      game_slug: 'slot',
      game_type: 'multiplier',
      finished_at: new Date(T0 + 35 * S).toISOString(),
      value: '3.50',
    });
    const times = all.map((r: { finished_at: string }) => Date.parse(r.finished_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.every((r: { game_type: string }) => r.game_type === 'multiplier')).toBe(true);
  });

  it.each([
    ['slots', ['slot'], 3],
    ['color', ['double'], 2],
    ['trending', [], 0],
  ])('type %s holds rows of %j only', async (type, games, n) => {
    const rows = (await get(`/api/history/type/${type}`)).json();
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((r: { game_slug: string }) => r.game_slug))).toEqual(new Set(games));
    expect(rows.every((r: { game_type: string }) => r.game_type === type)).toBe(true);
  });
});

describe('bad input', () => {
  const badLimits: [string, string][] = [
    ['0', 'limit=0'],
    ['1001', 'limit=1001'],
    ['abc', 'limit=abc'],
    ['1.5', 'limit=1.5'],
    ['-1', 'limit=-1'],
    ['empty', 'limit='],
    ['bare key', 'limit'],
    ['repeated', 'limit=5&limit=5'],
    ['exponent', 'limit=1e2'],
    ['plus sign', 'limit=%2B5'],
    ['padded', 'limit=%205'],
  ];
  const cases: [string, number, string][] = [
    ['/api/latest/Crash', 400, 'Invalid game slug'],
    ['/api/latest/wall_street', 400, 'Invalid game slug'],
    ['/api/latest/cr%20ash', 400, 'Invalid game slug'],
    ['/api/latest/crash%2Fx', 400, 'Invalid game slug'],
    [`/api/latest/${'a'.repeat(65)}`, 400, 'Invalid game slug'],
    [`/api/latest/${'a'.repeat(5000)}`, 400, 'Invalid game slug'],
    ['/api/latest/', 400, 'Invalid game slug'],
    [`/api/latest/${'a'.repeat(64)}`, 404, 'Game not found'],
    ['/api/latest/poker', 404, 'Game not found'],
    ['/api/history/CRASH', 400, 'Invalid game slug'],
    [`/api/history/${'b'.repeat(65)}`, 400, 'Invalid game slug'],
    ['/api/history/poker', 404, 'Game not found'],
    ['/api/history/poker?limit=abc', 404, 'Game not found'],
    ['/api/history/type/Multiplier', 400, 'Invalid game type'],
    ['/api/history/type/multi_plier', 400, 'Invalid game type'],
    ['/api/history/type/roulette', 404, 'Game type not found'],
    ...badLimits.map(([, q]): [string, number, string] => [`/api/history/crash?${q}`, 400, LIMIT_RULE]),
    ...badLimits.map(([, q]): [string, number, string] => [
      `/api/history/type/multiplier?${q}`,
      400,
      LIMIT_RULE,
    ]),
  ];

  it.each(cases)('GET %s → %i %s', async (url, status, text) => {
    const res = await get(url);
    expect(res.statusCode).toBe(status);
    const body = res.json();
    expect(body.success).toBe(false);
    expect(body.error).toContain(text);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('says a repeated limit must be given once', async () => {
    const res = await get('/api/history/crash?limit=5&limit=5');
    expect(res.json()).toEqual({ error: `${LIMIT_RULE}, given once`, success: false });
  });
});
