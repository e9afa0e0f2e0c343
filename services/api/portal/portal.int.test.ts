/**
 * The operator portal's REST API on a real broker and Postgres: the admin's single-use sign-in
 * link, the cookie session (HttpOnly, SameSite=Strict) with its CSRF header on every write, the
 * portal routes, and isolation: operator A's session sees nothing of operator B on any route.
 * Callbacks, their attempts and wallet transactions are fixture rows written as the saga and the
 * wallet projection write them; the operators' wallets are a stand-in HTTP server that records
 * every request.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';
import { parseCsv } from '../../../tests/support/console.ts';
import { startTestSandbox } from '../../../tests/support/sandbox.ts';

let t: AccessTestApi;
let wallet: Server;
let walletUrl: string;
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
type Op = { operator_id: string; api_token: string; signing_secret: string };
let A: Op;
let B: Op;
const admin = () => ({ 'x-api-key': t.adminKey });

/** Ids of the fixture rows: A's and B's callbacks, on rounds of their own. */
const TX = { a: 4_000_000_004, b: 4_000_000_104 } as const;
const ROUND = { a: 2_000_000_000_001, b: 2_000_000_000_002 } as const;
const DAY = '2026-03-04';

beforeAll(async () => {
  wallet = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'OK', balance: '100.00', currency: 'USD' }));
    });
  });
  await new Promise<void>((r) => wallet.listen(0, '127.0.0.1', r));
  walletUrl = `http://127.0.0.1:${(wallet.address() as AddressInfo).port}`;
  t = await startAccessTestApi({ RATE_LIMIT_AUTH_FAILURES: 40 });
  A = await t.operator({ name: 'Operator A', base_url: walletUrl });
  // B's wallet answers under /b: a request to it would show in `seen`.
  B = await t.operator({ name: 'Operator B', base_url: `${walletUrl}/b` });
  await fixtures();
}, 60_000);
afterAll(async () => {
  await t?.close();
  await new Promise((r) => wallet?.close(r));
});

/** One callback of `op` (as the saga inserts it) with `attempts` recorded attempts, the last at `at`. */
async function callback(op: Op, txId: number, roundId: number, userId: string, status: string, at: number) {
  const job = {
    kind: 'bet',
    txId,
    betTxId: txId,
    amountMinor: 250,
    bet: { round_id: roundId, currency: 'USD', user_id: userId, operator_id: op.operator_id, game: 'crash' },
  };
  await t.sql`
    insert into wallet_callbacks (tx_id, kind, bet_tx_id, operator_id, user_id, player_key, seq, job, status,
                                  attempts, next_attempt_at, created_at, updated_at, last_answer, last_error)
    values (${txId}, 'bet', ${txId}, ${op.operator_id}, ${userId}, ${`${op.operator_id}:${userId}`}, ${txId},
            ${t.sql.json(job)}, ${status}, 1, ${at + 60_000}, ${at - 1000}, ${at}, 'failed', 'HTTP 500')`;
  await t.sql`
    insert into wallet_callback_attempts (tx_id, attempt, operator_id, at, request_url, request_headers,
                                          request_body, response_status, response_body, latency_ms, class, code,
                                          error, next_attempt_at)
    values (${txId}, 1, ${op.operator_id}, ${at}, ${`${walletUrl}/wallet/bet`},
            ${t.sql.json({ 'webhook-id': `bet-${txId}`, 'webhook-signature': 'v1,abc' })},
            '{"action":"bet"}', 500, 'oops', 42, 'failed', 'OPERATOR_ERROR', null, ${at + 60_000})`;
}

/** One wallet transaction of `op` on DAY, as the wallet projection writes it. */
async function tx(op: Op, txId: number, kind: string, status: string, amount: number, at: string) {
  await t.sql`
    insert into wallet_transactions (tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game,
                                     round_id, amount_minor, mode, demo, status, round_status, requested_at,
                                     updated_at)
    values (${txId}, ${txId - (txId % 4)}, ${kind}, ${'00000000-0000-4000-8000-000000000001'}, ${op.operator_id},
            'u-rec', 'USD', 'crash', ${ROUND.a}, ${amount}, 'default', false, ${status}, 'won', ${at}, ${at})`;
}

async function fixtures() {
  const now = Date.now();
  await callback(A, TX.a, ROUND.a, 'player-a', 'due', now - 120_000);
  await callback(B, TX.b, ROUND.b, 'player-b', 'parked', now - 120_000);
  await tx(A, 8_000_000_000, 'bet', 'succeeded', 1000, `${DAY}T10:00:00Z`);
  await tx(A, 8_000_000_001, 'win', 'succeeded', 2500, `${DAY}T10:00:05Z`);
  await tx(A, 8_000_000_004, 'bet', 'rejected', 300, `${DAY}T11:00:00Z`);
  await tx(A, 8_000_000_008, 'bet', 'pending', 700, `${DAY}T23:59:59Z`);
  await tx(A, 8_000_000_012, 'bet', 'succeeded', 700, '2026-03-05T00:00:00Z');
  await tx(B, 8_000_000_100, 'bet', 'succeeded', 5000, `${DAY}T12:00:00Z`);
  await t.sql`
    insert into operator_breakers (operator_id, state, failures, opened_at, retry_at, last_error, updated_at)
    values (${A.operator_id}, 'open', 5, ${now}, ${now + 30_000}, 'HTTP 500', ${now})`;
}

/** A sign-in link token for `op` (POST /admin/operators/:id/portal-link). */
async function linkToken(op: Op, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/admin/operators/${op.operator_id}/portal-link`,
    headers: admin(),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return new URL(res.json().url).hash.replace('#portal-link=', '');
}

interface Session {
  readonly cookie: string;
  readonly csrf: string;
  readonly res: LightMyRequestResponse;
}

async function signIn(op: Op): Promise<Session> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/portal/session',
    payload: { link_token: await linkToken(op) },
  });
  expect(res.statusCode, res.body).toBe(200);
  const c = res.cookies.find((x) => x.name === 'portal_session');
  return { cookie: `portal_session=${c?.value}`, csrf: res.json().csrf_token, res };
}

function call(
  s: Session | undefined,
  method: string,
  url: string,
  opts: { payload?: unknown; csrf?: string | null } = {},
) {
  const headers: Record<string, string> = {};
  if (s) headers.cookie = s.cookie;
  const csrf = opts.csrf === undefined ? s?.csrf : opts.csrf;
  if (csrf !== null && csrf !== undefined) headers['x-csrf-token'] = csrf;
  return t.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(opts.payload !== undefined ? { payload: opts.payload as object } : {}),
  });
}

describe('portal link and session', () => {
  it('mints a link for an enabled operator only, with a bounded ttl', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/operators/${A.operator_id}/portal-link`,
      headers: admin(),
      payload: { ttl_s: 120 },
    });
    expect(res.statusCode).toBe(201);
    const b = res.json();
    expect(b.operator_id).toBe(A.operator_id);
    expect(b.url).toMatch(/^http:\/\/play\.test:8080\/console\/#portal-link=plk_[A-Za-z0-9_-]{43}$/);
    expect(Math.abs(Date.parse(b.expires_at) - Date.now() - 120_000)).toBeLessThan(10_000);
    const token = new URL(b.url).hash.replace('#portal-link=', '');
    const [row] = await t.sql<
      { token_hash: string }[]
    >`select token_hash from portal_links where operator_id = ${A.operator_id} order by created_at desc limit 1`;
    expect(row?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.token_hash).not.toContain(token);

    const unknown = await t.app.inject({
      method: 'POST',
      url: '/admin/operators/opr_nobody/portal-link',
      headers: admin(),
      payload: {},
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
    const noKey = await t.app.inject({
      method: 'POST',
      url: `/admin/operators/${A.operator_id}/portal-link`,
      payload: {},
    });
    expect(noKey.statusCode).toBe(401);
    for (const [payload, field] of [
      [{ ttl_s: 59 }, 'ttl_s'],
      [{ ttl_s: 3601 }, 'ttl_s'],
      [{ ttl_s: '900' }, 'ttl_s'],
      [{ ttl: 900 }, 'ttl'],
    ] as const) {
      const bad = await t.app.inject({
        method: 'POST',
        url: `/admin/operators/${A.operator_id}/portal-link`,
        headers: admin(),
        payload,
      });
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
      expect(bad.json().detail).toMatch(new RegExp(`^${field}:`));
    }
    // The body is required (as /openapi.json says): none at all is a 400, and no link is minted.
    const before = await t.sql`select count(*)::int as n from portal_links`;
    const noBody = await t.app.inject({
      method: 'POST',
      url: `/admin/operators/${A.operator_id}/portal-link`,
      headers: admin(),
    });
    expect(noBody.statusCode, noBody.body).toBe(400);
    expect(noBody.json().detail).toMatch(/^body\b/);
    const after = await t.sql`select count(*)::int as n from portal_links`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('refuses a link of a disabled operator', async () => {
    const C = await t.operator({ base_url: walletUrl });
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/admin/operators/${C.operator_id}`,
      headers: admin(),
    });
    expect(del.statusCode).toBe(200);
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/operators/${C.operator_id}/portal-link`,
      headers: admin(),
      payload: {},
    });
    expect(res.statusCode).toBe(404);
  });

  it('exchanges a link once for an HttpOnly SameSite=Strict session cookie', async () => {
    const token = await linkToken(A);
    const first = await t.app.inject({
      method: 'POST',
      url: '/api/portal/session',
      payload: { link_token: token },
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ operator_id: A.operator_id, name: 'Operator A' });
    expect(first.json().csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const set = String(first.headers['set-cookie']);
    expect(set).toMatch(/^portal_session=[A-Za-z0-9_-]{43};/);
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; SameSite=Strict/);
    expect(set).toMatch(/; Path=\//);
    expect(set).toMatch(/; Max-Age=28800/);
    // PUBLIC_BASE_URL is http here: no Secure (the browser would drop it).
    expect(set).not.toMatch(/Secure/);
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/portal/session',
      payload: { link_token: token },
    });
    expect(again.statusCode).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('exchanges a link at most once under simultaneous exchanges', async () => {
    const token = await linkToken(A);
    const all = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.app.inject({ method: 'POST', url: '/api/portal/session', payload: { link_token: token } }),
      ),
    );
    expect(all.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  it('refuses an expired link (401) and a malformed one (400 naming link_token)', async () => {
    const token = await linkToken(A);
    await t.sql`update portal_links set expires_at = now() - interval '1 second' where used_at is null`;
    const expired = await t.app.inject({
      method: 'POST',
      url: '/api/portal/session',
      payload: { link_token: token },
    });
    expect(expired.statusCode).toBe(401);
    for (const payload of [{ link_token: 'plk_short' }, { link_token: 5 }, {}]) {
      const bad = await t.app.inject({ method: 'POST', url: '/api/portal/session', payload });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toMatch(/^link_token:/);
    }
  });

  it('shows the session, and ends it on sign-out (with the CSRF header only)', async () => {
    const s = await signIn(A);
    const got = await call(s, 'GET', '/api/portal/session');
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({ operator_id: A.operator_id, csrf_token: s.csrf });
    expect((await call(undefined, 'GET', '/api/portal/session')).statusCode).toBe(401);
    expect((await call(s, 'DELETE', '/api/portal/session', { csrf: null })).statusCode).toBe(403);
    expect((await call(s, 'DELETE', '/api/portal/session', { csrf: 'x'.repeat(43) })).statusCode).toBe(403);
    const out = await call(s, 'DELETE', '/api/portal/session');
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^portal_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await call(s, 'GET', '/api/portal/session')).statusCode).toBe(401);
  });

  it('refuses a session past its 8 h and one of an operator disabled since', async () => {
    const s = await signIn(A);
    await t.sql`update portal_sessions set expires_at = now() - interval '1 second'
                where csrf_token = ${s.csrf}`;
    expect((await call(s, 'GET', '/api/portal/overview')).statusCode).toBe(401);
    const C = await t.operator({ base_url: walletUrl });
    const c = await signIn(C);
    expect((await call(c, 'GET', '/api/portal/settings')).statusCode).toBe(200);
    await t.app.inject({ method: 'DELETE', url: `/admin/operators/${C.operator_id}`, headers: admin() });
    expect((await call(c, 'GET', '/api/portal/settings')).statusCode).toBe(401);
  });

  it('answers 429 to a sign-in from an IP past its failed-credential budget, a good link included', async () => {
    const ip = '10.77.0.1';
    const codes: number[] = [];
    for (let i = 0; i < 41; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/api/portal/session',
        remoteAddress: ip,
        payload: { link_token: `plk_${randomBytes(32).toString('base64url')}` },
      });
      codes.push(r.statusCode);
    }
    expect(codes.slice(0, 40).every((c) => c === 401)).toBe(true);
    expect(codes[40]).toBe(429);
    const good = await t.app.inject({
      method: 'POST',
      url: '/api/portal/session',
      remoteAddress: ip,
      payload: { link_token: await linkToken(A) },
    });
    expect(good.statusCode).toBe(429);
    expect(Number(good.headers['retry-after'])).toBeGreaterThan(0);
  });
});

/** Every state-changing portal route with a valid body. */
const WRITES: [string, string, unknown][] = [
  ['POST', '/api/portal/probe', {}],
  ['PATCH', '/api/portal/settings', { timeout_ms: 2000 }],
  ['POST', '/api/portal/callbacks/redrive', { all: true }],
  ['POST', '/api/portal/test-callback', {}],
  ['POST', '/api/portal/conformance', {}],
  ['POST', '/api/portal/secret/rotate', { overlap_s: 600 }],
  ['DELETE', '/api/portal/session', {}],
];

describe('CSRF', () => {
  it.each(WRITES)(
    '%s %s: 403 csrf_failed without the header or with a wrong one, nothing done',
    async (m, url, payload) => {
      const s = await signIn(A);
      const [before] = await t.sql<{ signing_secret: string; timeout_ms: number }[]>`
      select signing_secret, timeout_ms from operators where operator_id = ${A.operator_id}`;
      const requests = seen.length;
      // The session's token with its last character changed, none, and an empty one.
      const wrong = `${s.csrf.slice(0, -1)}${s.csrf.endsWith('A') ? 'B' : 'A'}`;
      for (const csrf of [null, wrong, '']) {
        const res = await call(s, m, url, { payload, csrf });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: 'Forbidden', reason: 'csrf_failed' });
      }
      const [after] = await t.sql<{ signing_secret: string; timeout_ms: number }[]>`
      select signing_secret, timeout_ms from operators where operator_id = ${A.operator_id}`;
      expect(after).toEqual(before);
      expect(seen.length).toBe(requests);
      expect((await call(s, 'GET', '/api/portal/session')).statusCode).toBe(200);
    },
  );
});

describe('isolation: operator A sees nothing of operator B', () => {
  let a: Session;
  beforeAll(async () => {
    a = await signIn(A);
  });

  /** Every portal route, asked about B wherever it takes a selector. */
  const EVERY: [string, string, unknown][] = [
    ['GET', '/api/portal/session', undefined],
    ['GET', '/api/portal/overview', undefined],
    ['POST', '/api/portal/probe', {}],
    ['GET', '/api/portal/settings', undefined],
    ['PATCH', '/api/portal/settings', { win_path: '/wallet/win' }],
    ['GET', `/api/portal/callbacks?tx_id=${TX.b}&status=any`, undefined],
    ['GET', '/api/portal/callbacks?user_id=player-b&status=any', undefined],
    ['GET', `/api/portal/callbacks?round_id=${ROUND.b}&status=any`, undefined],
    ['GET', '/api/portal/callbacks?status=parked', undefined],
    ['GET', '/api/portal/callbacks?status=any&limit=1000', undefined],
    ['GET', `/api/portal/callbacks/${TX.b}`, undefined],
    ['POST', '/api/portal/callbacks/redrive', { tx_ids: [TX.b], status: 'parked' }],
    ['POST', '/api/portal/callbacks/redrive', { all: true, status: 'parked' }],
    ['POST', '/api/portal/test-callback', {}],
    ['POST', '/api/portal/conformance', {}],
    ['POST', '/api/portal/secret/rotate', { overlap_s: 60 }],
    ['GET', `/api/portal/reconciliation?date=${DAY}`, undefined],
    ['GET', `/api/portal/reconciliation?date=${DAY}&format=csv`, undefined],
    ['DELETE', '/api/portal/session', {}],
  ];
  it.each(EVERY)(
    '%s %s: nothing of B in the answer, nothing sent to B, B unchanged',
    async (m, url, payload) => {
      const s = await signIn(A);
      const [bBefore] = await t.sql`select * from operators where operator_id = ${B.operator_id}`;
      const [cbBefore] = await t.sql`select * from wallet_callbacks where tx_id = ${TX.b}`;
      const requests = seen.length;
      const res = await call(s, m, url, { payload });
      expect([200, 204, 404], res.body).toContain(res.statusCode);
      if (url.startsWith(`/api/portal/callbacks/${TX.b}`)) expect(res.statusCode).toBe(404);
      // A 404 names the id it was asked for, as it does for a missing one (compared below).
      const asked = url.startsWith(`/api/portal/callbacks/${TX.b}`) ? [] : [String(TX.b)];
      for (const marker of [B.operator_id, 'Operator B', 'player-b', String(ROUND.b), '8000000100', ...asked])
        expect(res.body).not.toContain(marker);
      expect(seen.slice(requests).filter((r) => r.url.startsWith('/b/'))).toEqual([]);
      expect((await t.sql`select * from operators where operator_id = ${B.operator_id}`)[0]).toEqual(bBefore);
      expect((await t.sql`select * from wallet_callbacks where tx_id = ${TX.b}`)[0]).toEqual(cbBefore);
    },
    60_000,
  );

  it("GET callbacks/:tx_id of B's callback is 404, as a missing one", async () => {
    const other = await call(a, 'GET', `/api/portal/callbacks/${TX.b}`);
    const missing = await call(a, 'GET', '/api/portal/callbacks/9999999999');
    expect(other.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(other.json().error.replace(String(TX.b), 'N')).toBe(
      missing.json().error.replace('9999999999', 'N'),
    );
  });

  it("re-drive of B's callback by tx id or all re-drives none of B's", async () => {
    for (const payload of [
      { tx_ids: [TX.b] },
      { tx_ids: [TX.b], status: 'parked' },
      { all: true, status: 'parked' },
    ]) {
      const res = await call(a, 'POST', '/api/portal/callbacks/redrive', { payload });
      expect(res.statusCode).toBe(200);
      expect((res.json().redriven as { tx_id: number }[]).map((c) => c.tx_id)).not.toContain(TX.b);
    }
    const [row] = await t.sql<
      { status: string }[]
    >`select status from wallet_callbacks where tx_id = ${TX.b}`;
    expect(row?.status).toBe('parked');
  });
});

describe('bad input: 400 naming the field', () => {
  let s: Session;
  beforeAll(async () => {
    s = await signIn(A);
  });
  const cases: [string, string, unknown, string][] = [
    ['GET', '/api/portal/callbacks?limit=0', undefined, 'limit'],
    ['GET', '/api/portal/callbacks?limit=1001', undefined, 'limit'],
    ['GET', '/api/portal/callbacks?tx_id=abc', undefined, 'tx_id'],
    ['GET', '/api/portal/callbacks?round_id=-1', undefined, 'round_id'],
    ['GET', '/api/portal/callbacks?status=lost', undefined, 'status'],
    ['GET', '/api/portal/callbacks?from=yesterday', undefined, 'from'],
    ['GET', '/api/portal/callbacks?from=2026-03-04T10:00:00Z&to=2026-03-04T09:00:00Z', undefined, 'to'],
    ['GET', '/api/portal/callbacks?operator_id=x', undefined, 'operator_id'],
    ['GET', '/api/portal/callbacks/0', undefined, 'tx_id'],
    ['GET', '/api/portal/callbacks/12x', undefined, 'tx_id'],
    ['GET', '/api/portal/reconciliation', undefined, 'date'],
    ['GET', '/api/portal/reconciliation?date=2026-02-30', undefined, 'date'],
    ['GET', '/api/portal/reconciliation?date=2026-03-04&format=xml', undefined, 'format'],
    ['POST', '/api/portal/callbacks/redrive', {}, 'tx_ids'],
    ['POST', '/api/portal/callbacks/redrive', { tx_ids: [1], all: true }, 'tx_ids'],
    ['POST', '/api/portal/callbacks/redrive', { tx_ids: [] }, 'tx_ids'],
    ['POST', '/api/portal/callbacks/redrive', { tx_ids: ['1'] }, 'tx_ids.0'],
    ['POST', '/api/portal/callbacks/redrive', { all: true, status: 'done' }, 'status'],
    ['POST', '/api/portal/callbacks/redrive', { all: true, operator_id: 'x' }, 'operator_id'],
    ['POST', '/api/portal/secret/rotate', {}, 'overlap_s'],
    ['POST', '/api/portal/secret/rotate', { overlap_s: 59 }, 'overlap_s'],
    ['POST', '/api/portal/secret/rotate', { overlap_s: 604_801 }, 'overlap_s'],
    ['POST', '/api/portal/secret/rotate', { overlap_s: 600.5 }, 'overlap_s'],
    ['PATCH', '/api/portal/settings', {}, 'body'],
    ['PATCH', '/api/portal/settings', { timeout_ms: 50 }, 'timeout_ms'],
    ['PATCH', '/api/portal/settings', { bet_path: 'no-slash' }, 'bet_path'],
    ['PATCH', '/api/portal/settings', { answer_table: 'nope' }, 'answer_table'],
    ['PATCH', '/api/portal/settings', { base_url: 'http://elsewhere' }, 'base_url'],
    ['PATCH', '/api/portal/settings', { round_close: 'round-end' }, 'round_end_path'],
    ['POST', '/api/portal/probe', { now: true }, 'now'],
    ['POST', '/api/portal/test-callback', { user_id: 'x' }, 'user_id'],
    ['POST', '/api/portal/conformance', { rows: [] }, 'rows'],
    ['DELETE', '/api/portal/session', { all: true }, 'all'],
  ];
  it.each(cases)('%s %s %j → 400 naming %s', async (m, url, payload, field) => {
    const res = await call(s, m, url, { payload });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatch(new RegExp(`^${field.replace('.', '\\.')}:`));
  });
});

describe('portal routes', () => {
  let s: Session;
  beforeAll(async () => {
    s = await signIn(A);
  });

  it('overview: operator, readiness, breaker, callbacks of the last hour', async () => {
    const res = await call(s, 'GET', '/api/portal/overview');
    expect(res.statusCode).toBe(200);
    const b = res.json();
    expect(b.operator).toMatchObject({ operator_id: A.operator_id, base_url: walletUrl, callback_form: 'A' });
    expect(b.operator.signing_secret).toBeUndefined();
    expect(b.breaker).toMatchObject({ state: 'open', failures: 5, last_error: 'HTTP 500' });
    expect(Date.parse(b.breaker.retry_at)).toBeGreaterThan(Date.now());
    expect(b.callbacks.per_minute.length).toBeGreaterThanOrEqual(60);
    expect(b.callbacks.last_hour).toMatchObject({ total: 1, succeeded: 0, failed: 1, success_rate: 0 });
    expect(b.callbacks.last_hour.latency_ms.p50).toBe(42);
    expect(b.callbacks.retrying).toBe(1);
  });

  it('probe and settings: PATCH changes the settings and probes again', async () => {
    const p = await call(s, 'POST', '/api/portal/probe', { payload: {} });
    expect(p.statusCode).toBe(200);
    expect(p.json().readiness.checks.map((c: { name: string }) => c.name)).toContain('balance');
    const patched = await call(s, 'PATCH', '/api/portal/settings', {
      payload: { timeout_ms: 3000, amount_format: 'number' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().operator).toMatchObject({ timeout_ms: 3000, amount_format: 'number' });
    expect(Date.parse(patched.json().readiness.checked_at)).toBeGreaterThan(Date.now() - 10_000);
    const got = await call(s, 'GET', '/api/portal/settings');
    expect(got.json().operator.timeout_ms).toBe(3000);
  });

  it('callbacks: search by round and player, one with its attempts, re-drive', async () => {
    const byRound = await call(s, 'GET', `/api/portal/callbacks?round_id=${ROUND.a}`);
    expect(byRound.json().callbacks).toEqual([
      expect.objectContaining({
        tx_id: TX.a,
        round_id: ROUND.a,
        user_id: 'player-a',
        amount_minor: 250,
        status: 'due',
      }),
    ]);
    const byUser = await call(s, 'GET', '/api/portal/callbacks?user_id=player-a&status=retrying');
    expect(byUser.json().callbacks.map((c: { tx_id: number }) => c.tx_id)).toEqual([TX.a]);
    const one = await call(s, 'GET', `/api/portal/callbacks/${TX.a}`);
    expect(one.statusCode).toBe(200);
    expect(one.json().attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        request: expect.objectContaining({ url: `${walletUrl}/wallet/bet`, body: '{"action":"bet"}' }),
        response: { status: 500, body: 'oops' },
        latency_ms: 42,
        class: 'failed',
      }),
    ]);
    expect(one.json().attempts[0].request.headers['webhook-signature']).toBe('v1,abc');
    expect(one.json().attempts_total).toBe(1);
    const r = await call(s, 'POST', '/api/portal/callbacks/redrive', { payload: { tx_ids: [TX.a] } });
    expect(r.statusCode).toBe(200);
    expect(r.json().redriven.map((c: { tx_id: number }) => c.tx_id)).toEqual([TX.a]);
    const [row] = await t.sql<
      { attempts: number }[]
    >`select attempts from wallet_callbacks where tx_id = ${TX.a}`;
    expect(row?.attempts).toBe(0);
  });

  it('test callback: a signed balance request, answered and classified; after a rotation, signed with both secrets', async () => {
    const before = seen.length;
    const res = await call(s, 'POST', '/api/portal/test-callback', { payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const b = res.json();
    expect(b).toMatchObject({ class: 'ok', error: null, response: { status: 200 } });
    expect(b.request.url).toBe(`${walletUrl}/wallet/balance`);
    expect(JSON.parse(b.request.body)).toMatchObject({
      user_id: 'platform-readiness-probe',
      currency: 'USD',
    });
    expect(seen.length).toBe(before + 1);
    const sent = seen[before];
    expect(sent?.headers['webhook-signature']).toBe(b.request.headers['webhook-signature']);
    const [row] = await t.sql<
      { signing_secret: string }[]
    >`select signing_secret from operators where operator_id = ${A.operator_id}`;
    const verify = (secret: string, h: IncomingHttpHeaders, body: string) =>
      new Webhook(secret).verify(body, {
        'webhook-id': String(h['webhook-id']),
        'webhook-timestamp': String(h['webhook-timestamp']),
        'webhook-signature': String(h['webhook-signature']),
      });
    expect(() => verify(row?.signing_secret as string, sent?.headers ?? {}, sent?.body ?? '')).not.toThrow();

    // force: the isolation tests rotated A's secret already, and that overlap is not over.
    const rot = await call(s, 'POST', '/api/portal/secret/rotate', {
      payload: { overlap_s: 3600, force: true },
    });
    expect(rot.statusCode, rot.body).toBe(200);
    expect(rot.json().signing_secret).toMatch(/^whsec_/);
    expect(Math.abs(Date.parse(rot.json().previous_valid_until) - Date.now() - 3_600_000)).toBeLessThan(
      10_000,
    );
    expect(rot.headers['cache-control']).toBe('no-store');
    const again = await call(s, 'POST', '/api/portal/test-callback', { payload: {} });
    const sig = String(again.json().request.headers['webhook-signature']);
    expect(sig.split(' ')).toHaveLength(2);
    const last = seen.at(-1);
    expect(() => verify(rot.json().signing_secret, last?.headers ?? {}, last?.body ?? '')).not.toThrow();
    expect(() => verify(row?.signing_secret as string, last?.headers ?? {}, last?.body ?? '')).not.toThrow();
  });

  it('secret rotation inside an overlap: 409 naming until when, of two at once exactly one 200; force rotates', async () => {
    const E = await t.operator({ name: 'Operator E', base_url: walletUrl });
    const e = await signIn(E);
    const secretOf = async () =>
      (
        await t.sql<{ signing_secret: string }[]>`
        select signing_secret from operators where operator_id = ${E.operator_id}`
      )[0]?.signing_secret;
    const both = await Promise.all(
      [0, 1].map(() => call(e, 'POST', '/api/portal/secret/rotate', { payload: { overlap_s: 600 } })),
    );
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const won = both.find((r) => r.statusCode === 200)?.json();
    const until = won.previous_valid_until as string;
    expect(await secretOf()).toBe(won.signing_secret);
    const lost = both.find((r) => r.statusCode === 409);
    expect(lost?.json()).toEqual({
      error: expect.stringContaining(`previous secret is valid until ${until}`),
      success: false,
    });

    const again = await call(e, 'POST', '/api/portal/secret/rotate', { payload: { overlap_s: 60 } });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toContain(until);
    expect(await secretOf()).toBe(won.signing_secret);

    const forced = await call(e, 'POST', '/api/portal/secret/rotate', {
      payload: { overlap_s: 60, force: true },
    });
    expect(forced.statusCode, forced.body).toBe(200);
    expect(await secretOf()).toBe(forced.json().signing_secret);
    const [row] = await t.sql`
      select previous_signing_secret from operators where operator_id = ${E.operator_id}`;
    expect(row?.previous_signing_secret).toBe(won.signing_secret);
  });

  it('conformance: every row of the kit with its exchanges against the operator', async () => {
    const res = await call(s, 'POST', '/api/portal/conformance', { payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const b = res.json();
    expect(typeof b.passed).toBe('boolean');
    expect(b.rows.length).toBe(11);
    const balance = b.rows.find((r: { id: string }) => r.id === 'balance');
    expect(balance.exchanges.length).toBeGreaterThan(0);
    expect(balance.exchanges[0].request.url).toBe(`${walletUrl}/wallet/balance`);
    expect(balance.exchanges[0].response.status).toBe(200);
  }, 120_000);

  it('conformance against a clean sandbox operator (its own base URL and secret): every row passes', async () => {
    const sbx = await startTestSandbox();
    try {
      await sbx.app.listen({ host: '127.0.0.1', port: 0 });
      const D = await t.operator({
        base_url: `http://127.0.0.1:${(sbx.app.server.address() as AddressInfo).port}`,
      });
      await t.sql`update operators set signing_secret = ${sbx.secret} where operator_id = ${D.operator_id}`;
      const d = await signIn(D);
      const t0 = Date.now();
      const res = await call(d, 'POST', '/api/portal/conformance', { payload: {} });
      const ms = Date.now() - t0;
      expect(res.statusCode, res.body).toBe(200);
      const b = res.json();
      expect(
        b.rows.filter((r: { ok: boolean }) => !r.ok),
        JSON.stringify(b.rows),
      ).toEqual([]);
      expect(b.passed).toBe(true);
      const bet = b.rows.find((r: { id: string }) => r.id === 'bet');
      expect(bet.exchanges[1]).toMatchObject({
        request: { method: 'POST', signing: 'valid' },
        response: { status: 200 },
        class: 'ok',
      });
      expect(JSON.parse(bet.exchanges[1].request.body)).toMatchObject({ action: 'bet', amount: '1.00' });
      console.log(`portal conformance against the sandbox: ${ms} ms`);

      // Rotated, with the sandbox still verifying with the replaced secret (inside the overlap): the
      // kit signs as the platform does then, with both secrets, so the operator still passes.
      const rot = await call(d, 'POST', '/api/portal/secret/rotate', { payload: { overlap_s: 600 } });
      expect(rot.statusCode, rot.body).toBe(200);
      const during = await call(d, 'POST', '/api/portal/conformance', { payload: {} });
      expect(during.statusCode, during.body).toBe(200);
      expect(
        during.json().rows.filter((r: { ok: boolean }) => !r.ok),
        JSON.stringify(during.json().rows),
      ).toEqual([]);
    } finally {
      await sbx.close();
    }
  }, 120_000);

  it('reconciliation: the UTC day in JSON and the same rows in CSV', async () => {
    const json = await call(s, 'GET', `/api/portal/reconciliation?date=${DAY}`);
    expect(json.statusCode).toBe(200);
    const j = json.json();
    expect(j.transactions.map((r: { tx_id: number }) => r.tx_id)).toEqual([
      8_000_000_000, 8_000_000_001, 8_000_000_004, 8_000_000_008,
    ]);
    expect(j.transactions.map((r: { state: string }) => r.state)).toEqual([
      'booked',
      'booked',
      'not_booked',
      'outstanding',
    ]);
    expect(j.transactions[3].finished_at).toBeNull();
    expect(j.transactions[0]).toMatchObject({
      amount_minor: 1000,
      currency: 'USD',
      created_at: `${DAY}T10:00:00.000Z`,
    });
    expect(j.totals).toMatchObject({
      transactions: 4,
      booked: 2,
      not_booked: 1,
      outstanding: 1,
      booked_by_currency: [
        { currency: 'USD', bet_minor: 1000, win_minor: 2500, rollback_minor: 0, net_minor: 1500 },
      ],
    });
    const csv = await call(s, 'GET', `/api/portal/reconciliation?date=${DAY}&format=csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toBe(
      `attachment; filename="reconciliation-${A.operator_id}-${DAY}.csv"`,
    );
    const rows = parseCsv(csv.body);
    const asText = (r: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? '' : String(v)]));
    expect(rows).toEqual(j.transactions.map(asText));
    expect(Object.keys(rows[0] ?? {})).toEqual(Object.keys(j.transactions[0]));
  });
});

describe('portal over https', () => {
  it('marks the cookie Secure and links to the https origin when PUBLIC_BASE_URL is https', async () => {
    const h = await startAccessTestApi({ PUBLIC_BASE_URL: 'https://casino.example' });
    try {
      const op = await h.operator({ base_url: walletUrl });
      const link = await h.app.inject({
        method: 'POST',
        url: `/admin/operators/${op.operator_id}/portal-link`,
        headers: { 'x-api-key': h.adminKey },
        payload: {},
      });
      expect(link.json().url).toMatch(/^https:\/\/casino\.example\/console\/#portal-link=plk_/);
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/portal/session',
        payload: { link_token: new URL(link.json().url).hash.replace('#portal-link=', '') },
      });
      expect(res.statusCode).toBe(200);
      const set = String(res.headers['set-cookie']);
      expect(set).toMatch(/; Secure/);
      expect(set).toMatch(/; HttpOnly/);
      expect(set).toMatch(/; SameSite=Strict/);
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe('OpenAPI', () => {
  it('documents every portal route with its security', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const want: [string, string][] = [
      ['/admin/operators/{id}/portal-link', 'post'],
      ['/api/portal/session', 'post'],
      ['/api/portal/session', 'get'],
      ['/api/portal/session', 'delete'],
      ['/api/portal/overview', 'get'],
      ['/api/portal/probe', 'post'],
      ['/api/portal/settings', 'get'],
      ['/api/portal/settings', 'patch'],
      ['/api/portal/callbacks', 'get'],
      ['/api/portal/callbacks/{tx_id}', 'get'],
      ['/api/portal/callbacks/redrive', 'post'],
      ['/api/portal/test-callback', 'post'],
      ['/api/portal/conformance', 'post'],
      ['/api/portal/secret/rotate', 'post'],
      ['/api/portal/reconciliation', 'get'],
    ];
    expect(doc.paths['/api/portal/secret/rotate'].post.responses['409']).toBeDefined();
    expect(
      doc.paths['/api/portal/secret/rotate'].post.requestBody.content['application/json'].schema.properties
        .force,
    ).toMatchObject({ type: 'boolean' });
    for (const [path, method] of want) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.summary).toBeTruthy();
      if (path.startsWith('/api/portal/') && !(path === '/api/portal/session' && method === 'post'))
        expect(op.security).toEqual([{ portalSession: [] }]);
    }
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/portal/')).length).toBe(11);
    expect(doc.components.securitySchemes.portalSession).toMatchObject({
      in: 'cookie',
      name: 'portal_session',
    });
  });
});
