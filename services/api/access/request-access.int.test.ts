import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';

let t: AccessTestApi;
let op: { operator_id: string; api_token: string };
const bearer = () => ({ authorization: `Bearer ${op.api_token}` });

beforeAll(async () => {
  t = await startAccessTestApi();
  op = await t.operator();
});
afterAll(async () => {
  await t?.close();
});

const requestAccess = (payload: unknown, headers: Record<string, string> = bearer()) =>
  t.app.inject({ method: 'POST', url: '/games/request-access', headers, payload: payload as object });
const open = (launch: unknown) => t.app.inject({ method: 'POST', url: '/play/open', payload: { launch } });
const launchOf = (gameUrl: string) => new URL(gameUrl).searchParams.get('launch') as string;

describe('POST /games/request-access', () => {
  it('creates a session row and SessionCreated, and returns a one-time game URL', async () => {
    const before = await t.end('accessSessions');
    const res = await requestAccess({
      game: 'double',
      user_id: 'player-1',
      username: 'Player One',
      avatar_url: 'https://cdn.example/a.png',
      lang: 'pt-BR',
      currency: 'EUR',
      balance: 12.5,
      extra_data: '{"vip":true}',
      expires_in_minutes: 5,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { game_url: string; session_token: string };
    expect(body.game_url).toMatch(/^http:\/\/play\.test:8080\/play\/\?launch=[A-Za-z0-9_-]{43}$/);
    expect(body.session_token).toMatch(/^st_[0-9a-f]{64}$/);
    expect(await t.end('accessSessions')).toBe(before + 1n);
    const [row] = await t.sql<
      { session_id: string; balance_minor: string; expires_at: Date; created_at: Date }[]
    >`
      select session_id, balance_minor, expires_at, created_at from access_sessions
      where session_token = ${body.session_token}`;
    expect(row?.balance_minor).toBe('1250');
    expect((row?.expires_at.getTime() ?? 0) - (row?.created_at.getTime() ?? 0)).toBe(5 * 60_000);
    const events = await t.accessEvents();
    const created = events.find((e) => e.value.session_id === row?.session_id);
    expect(created?.type).toBe('SessionCreated');
    expect(created?.value).toMatchObject({
      operator_id: op.operator_id,
      game: 'double',
      user_id: 'player-1',
      currency: 'EUR',
      balance_minor: 1250,
      lang: 'pt-BR',
      extra_data: '{"vip":true}',
      demo: false,
    });
  });

  it('applies the defaults: USD, 30 minutes, lang en; a demo session starts with 1000.00', async () => {
    const res = await requestAccess({ game: 'slot', user_id: 'd', username: 'D', demo: true });
    expect(res.statusCode).toBe(200);
    const [row] = await t.sql<{ currency: string; lang: string; balance_minor: string; m: number }[]>`
      select currency, lang, balance_minor, extract(epoch from expires_at - created_at) / 60 as m
      from access_sessions where session_token = ${(res.json() as { session_token: string }).session_token}`;
    expect(row).toMatchObject({ currency: 'USD', lang: 'en', balance_minor: '100000' });
    expect(Number(row?.m)).toBe(30);
  });

  it.each([
    ['JPY', 1250, '1250'],
    ['KWD', 1.005, '1005'],
    ['BHD', 0.001, '1'],
    ['BTC', 0.00000001, '1'],
    ['USDT', 1.5, '1500000'],
    ['USD', 1_000_000, '100000000'],
  ])('stores a %s balance of %d in its minor units (%s)', async (currency, balance, minor) => {
    const res = await requestAccess({
      game: 'crash',
      user_id: `m-${currency}`,
      username: 'M',
      currency,
      balance,
    });
    expect(res.statusCode).toBe(200);
    const [row] = await t.sql<{ balance_minor: string }[]>`
      select balance_minor from access_sessions where session_token = ${(res.json() as { session_token: string }).session_token}`;
    expect(row?.balance_minor).toBe(minor);
  });

  it('a demo session without a balance starts at 1000 major units of its currency', async () => {
    for (const [currency, minor] of [
      ['JPY', '1000'],
      ['KWD', '1000000'],
      ['BTC', '100000000000'],
    ]) {
      const res = await requestAccess({ game: 'slot', user_id: 'd', username: 'D', demo: true, currency });
      const [row] = await t.sql<{ balance_minor: string }[]>`
        select balance_minor from access_sessions where session_token = ${(res.json() as { session_token: string }).session_token}`;
      expect(row?.balance_minor, currency).toBe(minor);
    }
  });

  const ok = { game: 'crash', user_id: 'u', username: 'n' };
  const bad: [string, Record<string, string> | null, unknown, number, RegExp][] = [
    ['no bearer', {}, ok, 401, /Bearer/],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, ok, 401, /op_/],
    ['an unknown operator token', { authorization: `Bearer op_${'0'.repeat(64)}` }, ok, 401, /operator/],
    ['an admin API key as bearer', null, ok, 401, /op_/],
    ['no game', undefined as never, { user_id: 'u', username: 'n' }, 400, /game/],
    ['no user_id', undefined as never, { game: 'crash', username: 'n' }, 400, /user_id/],
    ['no username', undefined as never, { game: 'crash', user_id: 'u' }, 400, /username/],
    ['an empty user_id', undefined as never, { ...ok, user_id: '' }, 400, /user_id/],
    ['a numeric user_id', undefined as never, { ...ok, user_id: 42 }, 400, /user_id/],
    ['a string balance', undefined as never, { ...ok, balance: '10' }, 400, /balance/],
    ['a negative balance', undefined as never, { ...ok, balance: -1 }, 400, /balance/],
    ['three decimals', undefined as never, { ...ok, balance: 1.005 }, 400, /balance/],
    ['a string demo', undefined as never, { ...ok, demo: 'true' }, 400, /demo/],
    ['an unknown currency', undefined as never, { ...ok, currency: 'XXX' }, 400, /currency/],
    ['gold', undefined as never, { ...ok, currency: 'XAU' }, 400, /currency: must be an ISO 4217 currency/],
    ['a fund code', undefined as never, { ...ok, currency: 'CLF' }, 400, /currency/],
    ['a lower-case code', undefined as never, { ...ok, currency: 'usd' }, 400, /currency/],
    [
      'decimals in JPY',
      undefined as never,
      { ...ok, currency: 'JPY', balance: 12.5 },
      400,
      /balance: must have at most 0 decimals in JPY/,
    ],
    [
      'four decimals in KWD',
      undefined as never,
      { ...ok, currency: 'KWD', balance: 1.0005 },
      400,
      /at most 3 decimals in KWD/,
    ],
    [
      'nine decimals in BTC',
      undefined as never,
      { ...ok, currency: 'BTC', balance: 1e-9 },
      400,
      /at most 8 decimals in BTC/,
    ],
    [
      'a non-http avatar_url',
      undefined as never,
      { ...ok, avatar_url: 'javascript:alert(1)' },
      400,
      /avatar_url/,
    ],
    ['expires_in_minutes 0', undefined as never, { ...ok, expires_in_minutes: 0 }, 400, /expires_in_minutes/],
    [
      'expires_in_minutes 1441',
      undefined as never,
      { ...ok, expires_in_minutes: 1441 },
      400,
      /expires_in_minutes/,
    ],
    [
      'expires_in_minutes 1.5',
      undefined as never,
      { ...ok, expires_in_minutes: 1.5 },
      400,
      /expires_in_minutes/,
    ],
    ['an unknown field', undefined as never, { ...ok, colour: 'red' }, 400, /colour/],
    ['a JSON array body', undefined as never, [ok], 400, /body|expected object/],
    ['an unknown game', undefined as never, { ...ok, game: 'roulette' }, 404, /roulette/],
  ];
  it.each(bad)(
    'refuses %s with problem JSON and writes nothing',
    async (_n, headers, payload, status, detail) => {
      const before = { rows: await t.count('access_sessions'), end: await t.end('accessSessions') };
      const h = headers === null ? { authorization: `Bearer ${t.adminKey}` } : (headers ?? bearer());
      const res = await requestAccess(payload, h);
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const p = res.json() as { type: string; title: string; status: number; detail: string };
      expect(p).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
      expect(p.detail).toMatch(detail);
      expect(await t.count('access_sessions')).toBe(before.rows);
      expect(await t.end('accessSessions')).toBe(before.end);
    },
  );

  it('refuses a non-finite balance (1e400 parses to Infinity) and malformed JSON', async () => {
    const inf = await t.app.inject({
      method: 'POST',
      url: '/games/request-access',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '{"game":"crash","user_id":"u","username":"n","balance":1e400}',
    });
    expect(inf.statusCode).toBe(400);
    expect((inf.json() as { detail: string }).detail).toMatch(/balance/);
    const broken = await t.app.inject({
      method: 'POST',
      url: '/games/request-access',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '{"game":',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.headers['content-type']).toMatch(/problem\+json/);
  });

  it('refuses the token of a disabled operator', async () => {
    const other = await t.operator();
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/admin/operators/${other.operator_id}`,
      headers: { 'x-api-key': t.adminKey },
    });
    expect(del.statusCode).toBe(200);
    const res = await requestAccess(ok, { authorization: `Bearer ${other.api_token}` });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /play/open', () => {
  it('opens once: the player token and session; SessionOpened; then 410', async () => {
    const a = (await requestAccess({ game: 'wall-street', user_id: 'p2', username: 'Bo' })).json() as {
      game_url: string;
    };
    const first = await open(launchOf(a.game_url));
    expect(first.statusCode).toBe(200);
    const body = first.json() as { player_token: string; session: Record<string, unknown> };
    expect(body.player_token).toMatch(/^pt_[0-9a-f]{64}$/);
    expect(body.session).toMatchObject({
      game: 'wall-street',
      user_id: 'p2',
      username: 'Bo',
      demo: false,
      lang: 'en',
    });
    const events = await t.accessEvents();
    expect(
      events.some((e) => e.type === 'SessionOpened' && e.value.session_id === body.session.session_id),
    ).toBe(true);
    const before = await t.end('accessSessions');
    const second = await open(launchOf(a.game_url));
    expect(second.statusCode).toBe(410);
    expect(second.json()).toMatchObject({ status: 410, title: 'Gone', code: 'LAUNCH_USED' });
    expect(await t.end('accessSessions')).toBe(before);
  });

  it('lets exactly one of two simultaneous first opens win', async () => {
    for (let i = 0; i < 5; i++) {
      const a = (await requestAccess({ game: 'crash', user_id: `race-${i}`, username: 'R' })).json() as {
        game_url: string;
      };
      const code = launchOf(a.game_url);
      const [x, y] = await Promise.all([open(code), open(code)]);
      expect([x.statusCode, y.statusCode].sort()).toEqual([200, 410]);
    }
  });

  it('answers 404 for an unknown code, 410 for an expired one, 400 for no code', async () => {
    const before = await t.end('accessSessions');
    expect((await open('nope')).statusCode).toBe(404);
    const a = (await requestAccess({ game: 'crash', user_id: 'late', username: 'L' })).json() as {
      game_url: string;
      session_token: string;
    };
    await t.sql`update access_sessions set expires_at = now() - interval '1 second'
                where session_token = ${a.session_token}`;
    const after = await t.end('accessSessions');
    const expired = await open(launchOf(a.game_url));
    expect(expired.statusCode).toBe(410);
    expect(expired.json()).toMatchObject({ code: 'LAUNCH_EXPIRED' });
    expect((await open(42)).statusCode).toBe(400);
    expect(before + 1n).toBe(after); // only the request-access above appended
    expect(await t.end('accessSessions')).toBe(after);
  });
});
