/**
 * The input policy over every endpoint that takes input (findings 1 and 7),
 * table-driven on a real broker and Postgres: for every text field of every body (and the query
 * parameters), a NUL, a lone surrogate, one character over the documented maximum and a value of
 * the wrong type (number, array) are each a 400 naming the field; per endpoint an unknown field
 * and a body that is not valid UTF-8 are 400 too; nothing reaches the log or the tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessTestApi, startAccessTestApi } from '../support/access.ts';

let t: AccessTestApi;
let op: { api_token: string };
let player = '';

beforeAll(async () => {
  t = await startAccessTestApi();
  op = await t.operator();
  player = (await t.player(op.api_token)).token;
});
afterAll(async () => {
  await t?.close();
});

type Body = Record<string, unknown>;
interface Endpoint {
  readonly name: string;
  readonly url: string;
  readonly headers: () => Record<string, string>;
  readonly body: () => Body;
  /** Text fields (dotted path into the body) and their maximum length (undefined: an enum or pattern only). */
  readonly texts: Record<string, number | undefined>;
  /** Problem JSON (session API) or docs/contract.md's `{error, success:false}`. */
  readonly problem: boolean;
  /**
   * The answer to the valid base body when it passes the input policy but not a later rule (default:
   * a 2xx). POST /api/rounds: the admin key holds no game binding, so the publisher rules refuse it
   * with 403 after the body was read and checked.
   */
  readonly base?: number;
}

const admin = () => ({ 'x-api-key': t.adminKey });
const operator = () => ({ authorization: `Bearer ${op.api_token}` });
const in1h = () => new Date(Date.now() + 3_600_000).toISOString();

const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /api/auth/browser-key',
    url: '/api/auth/browser-key',
    headers: () => ({}),
    body: () => ({ visitor_id: 'v-1', bound_domain: 'shop.example.com' }),
    texts: { visitor_id: 128, bound_domain: 128 },
    problem: false,
  },
  {
    name: 'POST /api/auth/keys (admin)',
    url: '/api/auth/keys',
    headers: admin,
    body: () => ({
      name: 'k',
      scopes: ['read:games'],
      kind: 'public',
      allowed_origins: ['https://example.com'],
    }),
    texts: { name: 128, 'scopes.0': undefined, kind: undefined, 'allowed_origins.0': 256 },
    problem: false,
  },
  {
    name: 'POST /api/rounds',
    url: '/api/rounds',
    headers: admin,
    body: () => ({
      game_slug: 'slot',
      round_id: 3e12 + 1,
      finished_at: '2026-01-02T03:04:05Z',
      result: { reels: ['A', 'B', 'C'], multiplier: '1.50' },
      seed: 'ab'.repeat(32),
    }),
    texts: {
      game_slug: undefined,
      finished_at: 29,
      'result.reels.0': 32,
      'result.multiplier': undefined,
      seed: undefined,
    },
    problem: false,
    base: 403,
  },
  {
    name: 'POST /admin/operators (admin)',
    url: '/admin/operators',
    headers: admin,
    body: () => ({ name: 'op', callback_form: 'A', base_url: 'https://wallet.example', bet_path: '/bet' }),
    texts: { name: 128, callback_form: undefined, base_url: 2048, bet_path: 256 },
    problem: true,
  },
  {
    name: 'POST /admin/wallet/callbacks/redrive (admin)',
    url: '/admin/wallet/callbacks/redrive',
    headers: admin,
    body: () => ({
      status: 'parked',
      operator_id: 'op-1',
      user_id: 'u1',
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-02T00:00:00Z',
      dry_run: true,
    }),
    texts: { status: undefined, operator_id: 128, user_id: 128, from: 35, to: 35 },
    problem: true,
  },
  {
    name: 'POST /games/request-access',
    url: '/games/request-access',
    headers: operator,
    body: () => ({
      game: 'crash',
      user_id: 'u1',
      username: 'Ann',
      avatar_url: 'https://cdn.example/a.png',
      lang: 'en',
      currency: 'USD',
      extra_data: '{"vip":true}',
    }),
    texts: {
      game: 64,
      user_id: 128,
      username: 128,
      avatar_url: 2048,
      lang: 35,
      currency: undefined,
      extra_data: 4096,
    },
    problem: true,
  },
  {
    name: 'POST /games/free-bets',
    url: '/games/free-bets',
    headers: operator,
    body: () => ({
      game_slug: 'crash',
      user_id: 'u1',
      quantity: 1,
      value: 1,
      currency: 'USD',
      expires_at: in1h(),
      bonus_code: 'B1',
    }),
    texts: { game_slug: 64, user_id: 128, currency: undefined, expires_at: undefined, bonus_code: 64 },
    problem: true,
  },
  {
    name: 'POST /play/open',
    url: '/play/open',
    headers: () => ({}),
    body: () => ({ launch: 'x'.repeat(43) }),
    texts: { launch: 128 },
    problem: true,
  },
  {
    name: 'POST /play/bets',
    url: '/play/bets',
    headers: () => ({ authorization: `Bearer ${player}` }),
    body: () => ({ amount: 1, selection: { cashout_at: '2.00' } }),
    // Lengths and types of the bet body are services/api/access/bets.ts's; the text rules apply.
    texts: {},
    problem: true,
  },
];

function withField(body: Body, path: string, value: unknown): Body {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1] as string] = value;
  return copy;
}

interface Case {
  readonly endpoint: Endpoint;
  readonly what: string;
  readonly payload: Body | Buffer;
  /** The field the error must name at its start. */
  readonly field: string;
}

const cases: Case[] = ENDPOINTS.flatMap((e) => {
  const out: Case[] = [];
  const body = e.body();
  for (const [path, max] of Object.entries(e.texts)) {
    out.push({
      endpoint: e,
      what: `NUL in ${path}`,
      payload: withField(body, path, 'a\u0000b'),
      field: path,
    });
    out.push({
      endpoint: e,
      what: `lone surrogate in ${path}`,
      payload: withField(body, path, 'a\ud800'),
      field: path,
    });
    out.push({ endpoint: e, what: `number as ${path}`, payload: withField(body, path, 7), field: path });
    out.push({ endpoint: e, what: `array as ${path}`, payload: withField(body, path, ['a']), field: path });
    if (max !== undefined)
      out.push({
        endpoint: e,
        what: `${path} of ${max + 1} characters`,
        payload: withField(body, path, 'x'.repeat(max + 1)),
        field: path,
      });
  }
  if (e.url === '/games/request-access')
    out.push({
      endpoint: e,
      what: 'a well-formed language tag longer than 35 characters (finding 7: a 1 MB lang was stored)',
      payload: { ...body, lang: `en${'-abcdefgh'.repeat(4)}` },
      field: 'lang',
    });
  out.push({ endpoint: e, what: 'an unknown field', payload: { ...body, colour: 'red' }, field: 'colour' });
  out.push({
    endpoint: e,
    what: 'NUL in a nested unknown key',
    payload: { ...body, 'x\u0000': 1 },
    field: 'body',
  });
  // {"<first field>":"\xff…"}: bytes that are not UTF-8.
  const [k] = Object.keys(body);
  out.push({
    endpoint: e,
    what: 'a body that is not valid UTF-8',
    payload: Buffer.concat([Buffer.from(`{"${k}":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    field: 'body',
  });
  return out;
});

const stored = async () => ({
  keys: await t.keyTopicEnd(),
  rounds: await t.roundsTopicEnd(),
  sessions: await t.end('accessSessions'),
  wallet: await t.end('walletTransactions'),
  operators: await t.count('operators'),
  freeBets: await t.count('free_bets'),
  accessSessions: await t.count('access_sessions'),
});

describe('the input policy', () => {
  it('every endpoint accepts its valid base body (so each case below fails for its one change)', async () => {
    for (const e of ENDPOINTS.filter((x) => x.url !== '/play/open' && x.url !== '/play/bets')) {
      const res = await t.app.inject({ method: 'POST', url: e.url, headers: e.headers(), payload: e.body() });
      if (e.base) expect(res.statusCode, `${e.name}: ${res.body}`).toBe(e.base);
      else expect(res.statusCode, `${e.name}: ${res.body}`).toBeLessThan(300);
    }
  });

  it.each(cases.map((c) => [`${c.endpoint.name}: ${c.what}`, c] as const))(
    '%s → 400 naming the field',
    async (_n, c) => {
      const before = await stored();
      const res = await t.app.inject({
        method: 'POST',
        url: c.endpoint.url,
        headers: { ...c.endpoint.headers(), 'content-type': 'application/json' },
        payload: Buffer.isBuffer(c.payload) ? c.payload : JSON.stringify(c.payload),
      });
      expect(res.statusCode, res.body).toBe(400);
      const text = c.endpoint.problem
        ? (res.json() as { detail: string }).detail
        : (res.json() as { error: string }).error;
      if (c.endpoint.problem) expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      else expect(res.json()).toMatchObject({ success: false });
      expect(text.startsWith(`${c.field}:`), text).toBe(true);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(await stored()).toEqual(before);
    },
  );

  it.each([
    ['/api/history/crash?limit=1%00', 'limit', false],
    ['/api/history/type/color?limit=abc', 'limit', false],
    [`/sessions/00000000-0000-4000-8000-000000000000/transactions?pageSize=%00`, 'pageSize', true],
    [`/sessions/00000000-0000-4000-8000-000000000000/transactions?pageSize=1&x=%00`, 'x', true],
    ['/admin/wallet/callbacks?operator_id=%00', 'operator_id', true],
  ] as const)('query %s → 400 naming %s', async (url, field, problem) => {
    const res = await t.app.inject({ url, headers: problem ? operator() : {} });
    expect(res.statusCode, res.body).toBe(400);
    const text = problem ? res.json().detail : res.json().error;
    expect(text).toContain(field);
  });
});

/** A JSON text nesting `depth` arrays inside `{"name": …}`. */
const nested = (depth: number) => `{"name":${'['.repeat(depth)}${']'.repeat(depth)}}`;

describe('bad input probed from outside (no credential needed to reach it)', () => {
  // Every route reading a JSON body, with its credential when it needs one (public ones: none).
  it.each(ENDPOINTS.map((e) => [e.url, e] as const))(
    'POST %s with JSON nested 7,000 levels deep → 400 naming the depth limit',
    async (url, e) => {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { ...e.headers(), 'content-type': 'application/json' },
        payload: nested(7000),
      });
      expect(res.statusCode, res.body).toBe(400);
      const text = url.startsWith('/api/') ? res.json().error : res.json().detail;
      expect(text).toBe('body: nests deeper than 64 levels');
    },
  );

  it('JSON nested exactly 64 levels is parsed (the limit is not below it)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      headers: { 'content-type': 'application/json' },
      payload: `{"visitor_id":"v","bound_domain":"a.example","x":${'['.repeat(63)}${']'.repeat(63)}}`,
    });
    // Depth 64 (the object and 63 arrays) passes the depth check and reaches the schema: x is unknown.
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('x: unknown field');
  });

  it('brackets inside strings do not count as nesting', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ visitor_id: `v${'[{'.repeat(40)}\\"[`, bound_domain: 'depth.example' }),
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it.each([
    ['/admin/operators/a%00b', 'id', admin],
    ['/admin/operators/a%00b/probe', 'id', admin],
    ['/api/auth/keys/key_%00', 'id', admin],
    ['/admin/wallet/callbacks/tx%00', 'tx_id', admin],
    ['/sessions/a%00/transactions', 'sessionId', operator],
    ['/play/bets/tx%00', 'tx_id', () => ({ authorization: `Bearer ${player}` })],
    ['/api/latest/cr%00ash', 'game', () => ({})],
  ] as const)('NUL in the path parameter of %s → 400 naming %s', async (url, param, headers) => {
    const method = url.endsWith('/probe') ? 'POST' : url.startsWith('/api/auth/keys/') ? 'DELETE' : 'GET';
    const res = await t.app.inject({ method, url, headers: headers() });
    expect(res.statusCode, res.body).toBe(400);
    const text = url.startsWith('/api/') ? res.json().error : res.json().detail;
    expect(text).toBe(`${param}: must not contain NUL (U+0000)`);
  });

  it.each([
    ['/api/auth/browser-key', 'text/plain', false],
    ['/admin/operators', 'text/plain', true],
    ['/admin/operators', 'application/x-www-form-urlencoded', true],
    ['/api/auth/keys', 'application/xml', false],
  ] as const)('POST %s as %s → 415', async (url, type, problem) => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...admin(), 'content-type': type },
      payload: '{"name":"x"}',
    });
    expect(res.statusCode, res.body).toBe(415);
    if (problem) expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    else expect(res.json()).toMatchObject({ success: false });
  });

  it.each(['utf-16', 'UTF-16LE', 'iso-8859-1', '"latin1"'])(
    'application/json; charset=%s → 415 (only UTF-8 is read)',
    async (charset) => {
      const before = await stored();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/auth/browser-key',
        headers: { 'content-type': `application/json; charset=${charset}` },
        payload: Buffer.from(JSON.stringify({ visitor_id: 'v-cs', bound_domain: 'cs.example' }), 'utf16le'),
      });
      expect(res.statusCode, res.body).toBe(415);
      expect(res.json().error).toContain('charset');
      expect(await stored()).toEqual(before);
    },
  );

  it.each(['utf-8', 'UTF-8', '"utf-8"', 'utf8'])('application/json; charset=%s is read', async (charset) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      headers: { 'content-type': `application/json; charset=${charset}` },
      payload: JSON.stringify({ visitor_id: 'v-ok', bound_domain: 'ok.example' }),
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it.each([
    ['/api/history/crash?limit=%FF', 'limit', () => ({})],
    ['/api/games?x=%C3%28', 'x', () => ({})],
    ['/admin/wallet/callbacks?operator_id=%ED%A0%80', 'operator_id', admin],
    ['/sessions/active?%FF=1', 'querystring', operator],
  ] as const)('invalid UTF-8 in the query %s → 400 naming %s', async (url, field, headers) => {
    const problem = !url.startsWith('/api/');
    const res = await t.app.inject({ url, headers: headers() });
    expect(res.statusCode, res.body).toBe(400);
    const text: string = problem ? res.json().detail : res.json().error;
    expect(text.startsWith(`${field}:`), text).toBe(true);
    expect(text).toContain('UTF-8');
  });

  it.each([
    ['/api/history/crash?limit=2&foo=bar', 'foo', () => ({})],
    ['/api/history/type/color?sort=asc', 'sort', () => ({})],
    ['/api/games?verbose=1', 'verbose', () => ({})],
    ['/api/latest/crash?x=1', 'x', () => ({})],
    ['/api/auth/scopes?all=1', 'all', () => ({})],
    ['/health?deep=1', 'deep', () => ({})],
    ['/admin/operators?page=2', 'page', admin],
    ['/admin/wallet/callbacks?limit=5&colour=red', 'colour', admin],
    ['/games?lang=en', 'lang', operator],
    ['/sessions/active?all=1', 'all', operator],
    ['/sessions/00000000-0000-4000-8000-000000000000/transactions?pageSize=1&page=2', 'page', operator],
  ] as const)('unknown query parameter on %s → 400 naming %s', async (url, param, headers) => {
    const res = await t.app.inject({ url, headers: headers() });
    expect(res.statusCode, res.body).toBe(400);
    const text: string =
      url.startsWith('/admin') || url.startsWith('/games') || url.startsWith('/sessions')
        ? res.json().detail
        : res.json().error;
    expect(text).toBe(`${param}: unknown query parameter`);
  });

  it('declared query parameters still pass, and the demo pages keep theirs', async () => {
    expect((await t.app.inject({ url: '/api/history/crash?limit=2' })).statusCode).toBe(200);
    expect(
      (await t.app.inject({ url: '/admin/wallet/callbacks?limit=5', headers: admin() })).statusCode,
    ).toBe(200);
    expect((await t.app.inject({ url: '/index.html?game=crash&key=pk_live_x' })).statusCode).toBe(200);
  });
});
