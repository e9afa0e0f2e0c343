import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';

let t: AccessTestApi;
let op: { operator_id: string; api_token: string; signing_secret: string };
let rival: { operator_id: string; api_token: string };
const as = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await startAccessTestApi();
  op = await t.operator({ name: 'main', callback_form: 'B', base_url: 'http://wallet.test:9000/' });
  rival = await t.operator();
});
afterAll(async () => {
  await t?.close();
});

describe('session endpoints (operator bearer)', () => {
  it('GET /games lists the four games', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/games', headers: as(op.api_token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      games: [
        { id: 1, slug: 'crash', name: 'Crash', type: 'multiplier' },
        { id: 2, slug: 'double', name: 'Double', type: 'color' },
        { id: 3, slug: 'slot', name: 'Slot Machine', type: 'slots' },
        { id: 4, slug: 'wall-street', name: 'Wall Street', type: 'trending' },
      ],
    });
    expect((await t.app.inject({ method: 'GET', url: '/games' })).statusCode).toBe(401);
  });

  it('GET /sessions/active lists opened sessions of the caller only', async () => {
    const p = await t.player(op.api_token, { user_id: 'act' });
    await t.player(rival.api_token, { user_id: 'rival' });
    const unopened = await t.app.inject({
      method: 'POST',
      url: '/games/request-access',
      headers: as(op.api_token),
      payload: { game: 'slot', user_id: 'never', username: 'N' },
    });
    expect(unopened.statusCode).toBe(200);
    const res = await t.app.inject({ method: 'GET', url: '/sessions/active', headers: as(op.api_token) });
    const sessions = (res.json() as { sessions: { session_id: string; user_id: string }[] }).sessions;
    expect(sessions.map((s) => s.user_id)).toEqual(['act']);
    expect(sessions[0]?.session_id).toBe(p.sessionId);
  });

  it('GET /sessions/:id/transactions pages the wallet rows; other operators get 404', async () => {
    const p = await t.player(op.api_token, { user_id: 'tx' });
    for (let i = 1; i <= 5; i++) {
      await t.sql`
        insert into wallet_transactions (tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game,
          round_id, amount_minor, mode, demo, status, round_status, requested_at, updated_at)
        values (${i * 4}, ${i * 4}, 'bet', ${p.sessionId}, ${op.operator_id}, 'tx', 'USD', 'crash',
          ${1e12 + i}, ${i * 125}, 'default', false, 'succeeded', 'lost', ${new Date(1_700_000_000_000 + i)}, now())`;
    }
    const url = `/sessions/${p.sessionId}/transactions`;
    const res = await t.app.inject({
      method: 'GET',
      url: `${url}?pageSize=2&pageNumber=2`,
      headers: as(op.api_token),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      transactions: [
        {
          transactionId: 12,
          roundId: String(1e12 + 3),
          transactionType: 'bet',
          requestedAt: new Date(1_700_000_000_003).toISOString(),
          transactionStatus: 'succeeded',
          amount: 3.75,
          roundStatus: 'lost',
        },
        {
          transactionId: 16,
          roundId: String(1e12 + 4),
          transactionType: 'bet',
          requestedAt: new Date(1_700_000_000_004).toISOString(),
          transactionStatus: 'succeeded',
          amount: 5,
          roundStatus: 'lost',
        },
      ],
      pagination: { pageSize: 2, pageNumber: 2, totalPages: 3, totalItems: 5 },
    });
    const dflt = (await t.app.inject({ method: 'GET', url, headers: as(op.api_token) })).json() as {
      pagination: unknown;
    };
    expect(dflt.pagination).toEqual({ pageSize: 20, pageNumber: 1, totalPages: 1, totalItems: 5 });
    expect((await t.app.inject({ method: 'GET', url, headers: as(rival.api_token) })).statusCode).toBe(404);
    for (const q of [
      'pageSize=0',
      'pageSize=101',
      'pageSize=abc',
      'pageNumber=0',
      'pageNumber=-1',
      'pageNumber=1.5',
    ]) {
      const r = await t.app.inject({ method: 'GET', url: `${url}?${q}`, headers: as(op.api_token) });
      expect(r.statusCode, q).toBe(400);
      expect(r.headers['content-type']).toMatch(/problem\+json/);
    }
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/sessions/not-a-uuid/transactions',
      headers: as(op.api_token),
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('POST /games/free-bets creates a grant; bad bodies write nothing', async () => {
    const good = {
      game_slug: 'crash',
      user_id: 'fb',
      quantity: 3,
      value: 1.25,
      currency: 'EUR',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      bonus_code: 'B1',
    };
    const res = await t.app.inject({
      method: 'POST',
      url: '/games/free-bets',
      headers: as(op.api_token),
      payload: good,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      game_slug: 'crash',
      quantity: 3,
      quantity_left: 3,
      value: 1.25,
      bonus_code: 'B1',
    });
    const [row] = await t.sql<{ value_minor: string; operator_id: string }[]>`
      select value_minor, operator_id from free_bets where user_id = 'fb'`;
    expect(row).toEqual({ value_minor: '125', operator_id: op.operator_id });
    // In the precision of its currency: 1.250 KWD is 1250 minor units.
    const kwd = await t.app.inject({
      method: 'POST',
      url: '/games/free-bets',
      headers: as(op.api_token),
      payload: { ...good, user_id: 'fb-kwd', currency: 'KWD', value: 1.25 },
    });
    expect(kwd.statusCode).toBe(201);
    const [kwdRow] = await t.sql<
      { value_minor: string }[]
    >`select value_minor from free_bets where user_id = 'fb-kwd'`;
    expect(kwdRow?.value_minor).toBe('1250');
    const bad: [Record<string, unknown>, number, Record<string, string>?][] = [
      [good, 401, {}],
      [{ ...good, game_slug: 'roulette' }, 404],
      [{ ...good, quantity: 0 }, 400],
      [{ ...good, quantity: '3' }, 400],
      [{ ...good, value: -1 }, 400],
      [{ ...good, currency: 'usd' }, 400],
      [{ ...good, currency: 'XAU' }, 400],
      [{ ...good, currency: 'JPY', value: 1.25 }, 400],
      [{ ...good, currency: 'BTC', value: 1e-9 }, 400],
      [{ ...good, expires_at: 'tomorrow' }, 400],
      [{ ...good, expires_at: new Date(Date.now() - 1000).toISOString() }, 400],
      [{ game_slug: 'crash' }, 400],
    ];
    for (const [payload, status, headers] of bad) {
      const before = await t.count('free_bets');
      const r = await t.app.inject({
        method: 'POST',
        url: '/games/free-bets',
        headers: headers ?? as(op.api_token),
        payload,
      });
      expect(r.statusCode, JSON.stringify(payload)).toBe(status);
      expect(r.headers['content-type']).toMatch(/problem\+json/);
      expect(await t.count('free_bets')).toBe(before);
    }
  });

  it('describes the session API in /openapi.json', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    for (const p of [
      '/games/request-access',
      '/play/open',
      '/play/bets',
      '/sessions/{sessionId}/transactions',
      '/admin/operators',
    ])
      expect(doc.paths[p], p).toBeDefined();
    expect(doc.components.schemas.Problem).toBeDefined();
  });
});
