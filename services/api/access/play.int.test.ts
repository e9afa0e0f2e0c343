import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BetPlaced } from '../../../lib/log/wallet-events.ts';
import type { GameSlug } from '../../../rules/games/catalog.ts';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';

/** The round of each game opened for this file's bets. */
const openRounds: Partial<Record<GameSlug, number>> = {};

let t: AccessTestApi;
let op: { operator_id: string; api_token: string; signing_secret: string };
let wallet: Server;
/** Balance requests the fake operator received, after its signature check. */
const seen: { body: Record<string, unknown>; verified: boolean }[] = [];

beforeAll(async () => {
  t = await startAccessTestApi();
  // A real HTTP operator that checks the Standard Webhooks signature with the operator's secret.
  let secret = '';
  wallet = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      let verified = false;
      try {
        new Webhook(secret).verify(raw, req.headers as Record<string, string>);
        verified = true;
      } catch {}
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ body, verified });
      if (req.url !== '/wallet/balance' || !verified) {
        res.writeHead(401).end('{"error":{"code":"INVALID_SIGNATURE","message":"bad"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          user_id: body.user_id,
          currency: body.currency,
          balance: '77.10',
          platform_session_token: 'x',
        }),
      );
    });
  });
  await new Promise<void>((r) => wallet.listen(0, '127.0.0.1', r));
  const port = (wallet.address() as AddressInfo).port;
  op = await t.operator({ base_url: `http://127.0.0.1:${port}`, timeout_ms: 2000 });
  secret = op.signing_secret;
  // Bets go only on a round whose betting window is open on the log: open one per game.
  for (const g of ['crash', 'double', 'slot'] as const) openRounds[g] = await t.openRound(g);
});
afterAll(async () => {
  await t?.close();
  wallet?.close();
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const bet = (token: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/play/bets', headers: as(token), payload: payload as object });
const betOf = async (txId: number): Promise<BetPlaced | undefined> =>
  (await t.walletEvents()).find((e) => e.type === 'BetPlaced' && e.value.tx_id === txId)?.value as BetPlaced;

describe('player routes', () => {
  it('GET /play/balance calls the operator, signed, with user_id, currency, session_token', async () => {
    const p = await t.player(op.api_token, { user_id: 'real-1', currency: 'BRL' });
    const res = await t.app.inject({ method: 'GET', url: '/play/balance', headers: as(p.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ balance: '77.10', currency: 'BRL', demo: false });
    expect(seen.at(-1)).toEqual({
      body: { user_id: 'real-1', currency: 'BRL', session_token: p.sessionToken },
      verified: true,
    });
  });

  it('GET /play/balance answers 502 problem JSON when the operator refuses', async () => {
    const other = await t.operator({ base_url: 'http://127.0.0.1:9', timeout_ms: 500 });
    const p = await t.player(other.api_token, { user_id: 'real-2' });
    const res = await t.app.inject({ method: 'GET', url: '/play/balance', headers: as(p.token) });
    expect(res.statusCode).toBe(502);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });

  it('places a bet on the open round with count_register and tx_id from the sequence', async () => {
    const p = await t.player(op.api_token, { user_id: 'b1', game: 'crash' });
    const next = openRounds.crash as number;
    const a = await bet(p.token, { amount: 2.5, selection: { auto_cashout: '2' } });
    expect(a.statusCode).toBe(202);
    const A = a.json() as { tx_id: number; round_id: number; count_register: number };
    expect(A).toMatchObject({ round_id: next, count_register: 1 });
    expect(A.tx_id % 4).toBe(0);
    const b = await bet(p.token, { amount: 1, round_id: String(next), selection: { auto_cashout: 1.5 } });
    expect(b.statusCode).toBe(202);
    const B = b.json() as { tx_id: number; count_register: number };
    expect(B.count_register).toBe(2);
    expect(B.tx_id).toBeGreaterThan(A.tx_id);
    const placed = await betOf(A.tx_id);
    expect(placed?.bet).toMatchObject({
      operator_id: op.operator_id,
      user_id: 'b1',
      game: 'crash',
      round_id: next,
      amount_minor: 250,
      mode: 'default',
      count_register: 1,
      demo: false,
    });
    expect(placed?.selection).toEqual({ 'casino.wallet.CrashBet': { auto_cashout: '2.00' } });
    // GET /play/round lists this session's bets of the open round (bets-store.ts roundBetsOf).
    const round = await t.app.inject({ method: 'GET', url: '/play/round', headers: as(p.token) });
    expect(round.statusCode).toBe(200);
    const R = round.json() as { round_id: number; phase: string; bets: { tx_id: number; cash_out: null }[] };
    expect(R).toMatchObject({ round_id: next, phase: 'betting' });
    expect(R.bets.map((x) => x.tx_id)).toEqual([A.tx_id, B.tx_id]);
    expect(R.bets.every((x) => x.cash_out === null)).toBe(true);
  });

  it('GET /play/bets/:tx_id is 404 until projected, then the rows of that bet', async () => {
    const p = await t.player(op.api_token, { user_id: 'b2', game: 'double' });
    const placed = (await bet(p.token, { amount: 1, selection: { color: 'white' } })).json() as {
      tx_id: number;
      round_id: number;
    };
    const url = `/play/bets/${placed.tx_id}`;
    expect((await t.app.inject({ method: 'GET', url, headers: as(p.token) })).statusCode).toBe(404);
    await t.sql`
      insert into wallet_transactions (tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game,
        round_id, amount_minor, mode, demo, status, round_status, requested_at, updated_at)
      values (${placed.tx_id}, ${placed.tx_id}, 'bet', ${p.sessionId}, ${op.operator_id}, 'b2', 'USD', 'double',
        ${placed.round_id}, 100, 'default', false, 'pending', 'open', now(), now())`;
    const res = await t.app.inject({ method: 'GET', url, headers: as(p.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      transactions: [
        { tx_id: placed.tx_id, kind: 'bet', status: 'pending', round_status: 'open', amount: 1 },
      ],
    });
    const other = await t.player(op.api_token, { user_id: 'b3', game: 'double' });
    expect((await t.app.inject({ method: 'GET', url, headers: as(other.token) })).statusCode).toBe(404);
  });

  it('plays a free bet from a grant (mode free, grant value, bonus code) until none is left', async () => {
    const grant = await t.app.inject({
      method: 'POST',
      url: '/games/free-bets',
      headers: as(op.api_token),
      payload: {
        game_slug: 'double',
        user_id: 'f1',
        quantity: 1,
        value: 0.5,
        currency: 'USD',
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        bonus_code: 'WELCOME',
      },
    });
    expect(grant.statusCode).toBe(201);
    const p = await t.player(op.api_token, { user_id: 'f1', game: 'double' });
    const res = await bet(p.token, { free: true, selection: { color: 'red' } });
    expect(res.statusCode).toBe(202);
    const placed = await betOf((res.json() as { tx_id: number }).tx_id);
    expect(placed?.bet).toMatchObject({ mode: 'free', amount_minor: 50, bonus_code: 'WELCOME' });
    const before = await t.end('walletTransactions');
    const none = await bet(p.token, { free: true, selection: { color: 'red' } });
    expect(none.statusCode).toBe(409);
    expect(none.json()).toMatchObject({ code: 'NO_FREE_BET' });
    expect(await t.end('walletTransactions')).toBe(before);
  });

  it('demo: the virtual balance, bets within it, 402 beyond it', async () => {
    const p = await t.player(op.api_token, { user_id: 'demo-1', game: 'slot', demo: true, balance: 3 });
    const calls = seen.length;
    const bal = await t.app.inject({ method: 'GET', url: '/play/balance', headers: as(p.token) });
    expect(bal.json()).toEqual({ balance: '3.00', currency: 'USD', demo: true });
    expect(seen.length).toBe(calls); // no callback
    const ok = await bet(p.token, { amount: 3, selection: {} });
    expect(ok.statusCode).toBe(202);
    expect((await betOf((ok.json() as { tx_id: number }).tx_id))?.bet.demo).toBe(true);
    const tooMuch = await bet(p.token, { amount: 3.01, selection: {} });
    expect(tooMuch.statusCode).toBe(402);
  });

  describe('refuses bad bets with problem JSON and appends nothing', () => {
    let crash: string;
    let demo: string;
    beforeAll(async () => {
      crash = (await t.player(op.api_token, { user_id: 'bad', game: 'crash' })).token;
      demo = (await t.player(op.api_token, { user_id: 'bad-demo', game: 'crash', demo: true })).token;
    });
    const sel = { auto_cashout: '2.00' };
    const cases: [string, string | null, unknown, number][] = [
      ['no bearer', null, { amount: 1, selection: sel }, 401],
      ['an operator token as player bearer', 'op', { amount: 1, selection: sel }, 401],
      ['no amount', 'crash', { selection: sel }, 400],
      ['a string amount', 'crash', { amount: '1', selection: sel }, 400],
      ['a zero amount', 'crash', { amount: 0, selection: sel }, 400],
      ['a negative amount', 'crash', { amount: -1, selection: sel }, 400],
      ['three decimals', 'crash', { amount: 1.001, selection: sel }, 400],
      ['no selection', 'crash', { amount: 1 }, 400],
      ['another game’s selection', 'crash', { amount: 1, selection: { color: 'red' } }, 400],
      ['cash-out 1.00', 'crash', { amount: 1, selection: { auto_cashout: '1.00' } }, 400],
      [
        'a round before the open one (finished: no more bets)',
        'crash',
        () => ({ amount: 1, round_id: (openRounds.crash as number) - 1, selection: sel }),
        409,
      ],
      [
        'a round after the open one',
        'crash',
        () => ({ amount: 1, round_id: (openRounds.crash as number) + 1, selection: sel }),
        409,
      ],
      ['a free bet without a grant', 'crash', { free: true, selection: sel }, 409],
      ['a free bet in demo', 'demo', { free: true, selection: sel }, 400],
    ];
    it.each(cases)('%s', async (_n, who, payload, status) => {
      const before = await t.end('walletTransactions');
      const counts = await t.count('access_round_bets');
      const token = who === 'crash' ? crash : who === 'demo' ? demo : who === 'op' ? op.api_token : null;
      const res = await t.app.inject({
        method: 'POST',
        url: '/play/bets',
        headers: token ? as(token) : {},
        // Payloads naming the open round are built once it is open (after collection).
        payload: (typeof payload === 'function' ? payload() : payload) as object,
      });
      expect(res.statusCode, res.body).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status, detail: expect.any(String) });
      expect(await t.end('walletTransactions')).toBe(before);
      expect(await t.count('access_round_bets')).toBe(counts);
    });

    it('a non-finite amount (1e400 parses to Infinity) and an amount above the maximum', async () => {
      const before = await t.end('walletTransactions');
      for (const amount of ['1e400', '-1e400', '1000000.01']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/play/bets',
          headers: { ...as(crash), 'content-type': 'application/json' },
          payload: `{"amount":${amount},"selection":{"auto_cashout":"2.00"}}`,
        });
        expect(res.statusCode, amount).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect((res.json() as { detail: string }).detail).toMatch(/^amount: /);
      }
      expect(await t.end('walletTransactions')).toBe(before);
    });
  });
});
