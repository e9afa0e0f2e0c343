/**
 * Operator readiness through the real API and Postgres against real HTTP
 * operators: the probe runs when an operator is registered or changed, its result is shown by the
 * admin API, and request-access grants a real-money session only to a ready operator whose breaker
 * is closed (503 OPERATOR_NOT_READY or OPERATOR_UNAVAILABLE with Retry-After otherwise, and no
 * session). Cases: unconfigured (no route answers), unreachable, wrong signature, slow, healthy.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateBreaker } from '../../../lib/db/operator-breakers.ts';
import { afterBetAnswer } from '../../../rules/wallet/breaker.ts';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';
import { startTestOperator, type TestOperator } from '../../../tests/support/wallet-saga.ts';

let t: AccessTestApi;
let nothing: Server;
let nothingUrl: string;
const operators: TestOperator[] = [];

beforeAll(async () => {
  t = await startAccessTestApi();
  // An origin that answers 404 to every path: an operator whose callbacks are not configured.
  nothing = createServer((_req, res) => res.writeHead(404).end('{"error":"no such route"}'));
  await new Promise<void>((r) => nothing.listen(0, '127.0.0.1', r));
  nothingUrl = `http://127.0.0.1:${(nothing.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  nothing?.close();
  for (const o of operators) await o.close();
});

const admin = () => ({ 'x-api-key': t.adminKey });
type Check = { name: string; ok: boolean; detail: string };
type View = {
  operator_id: string;
  api_token: string;
  signing_secret: string;
  readiness: { ready: boolean; checks: Check[] };
};

async function register(body: Record<string, unknown>): Promise<View> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/operators',
    headers: admin(),
    payload: { name: 'probe', callback_form: 'A', ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as View;
}

async function requestAccess(token: string, demo = false) {
  const before = await t.count('access_sessions');
  const res = await t.app.inject({
    method: 'POST',
    url: '/games/request-access',
    headers: { authorization: `Bearer ${token}` },
    payload: { game: 'crash', user_id: 'p1', username: 'P', demo },
  });
  return { res, created: (await t.count('access_sessions')) - before };
}

describe('readiness probe', () => {
  it.each([
    ['unconfigured (no route answers)', () => nothingUrl, /HTTP 404/],
    ['unreachable', () => 'http://127.0.0.1:9', /ECONNREFUSED|connection/],
  ])(
    '%s: not ready, and request-access refuses with 503 OPERATOR_NOT_READY and no session',
    async (_n, url, why) => {
      const o = await register({ base_url: url() });
      expect(o.readiness.ready).toBe(false);
      expect(o.readiness.checks.find((c) => c.name === 'balance')?.detail).toMatch(why);
      const { res, created } = await requestAccess(o.api_token);
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.json()).toMatchObject({ status: 503, code: 'OPERATOR_NOT_READY' });
      expect(res.headers['retry-after']).toBe('5');
      expect(created).toBe(0);
      // A demo session calls no operator: granted.
      expect((await requestAccess(o.api_token, true)).res.statusCode).toBe(200);
    },
  );

  it('wrong signature, then fixed: not ready (401 on the balance), then ready and granted', async () => {
    const wrong = await startTestOperator(100_000);
    operators.push(wrong);
    const o = await register({ base_url: wrong.url });
    expect(o.readiness.ready).toBe(false);
    expect(o.readiness.checks.find((c) => c.name === 'balance')?.detail).toMatch(/HTTP 401.*signature/);
    // The operator now verifies with the secret we sign with, at another address: PATCH re-probes.
    const right = await startTestOperator(100_000, o.signing_secret);
    operators.push(right);
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
      payload: { base_url: right.url },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const view = patched.json() as View;
    expect(view.readiness.ready).toBe(true);
    expect(view.readiness.checks.map((c) => [c.name, c.ok])).toEqual([
      ['balance', true],
      ['bet', true],
      ['win', true],
      ['rollback', true],
    ]);
    expect(right.requests.find((r) => r.kind === 'balance')?.body).toMatchObject({
      user_id: 'platform-readiness-probe',
    });
    const got = await t.app.inject({
      method: 'GET',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
    });
    expect((got.json() as View).readiness.ready).toBe(true);
    const { res, created } = await requestAccess(o.api_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(created).toBe(1);
  });

  it('slow: no balance within the timeout is not ready', async () => {
    const o = await register({ base_url: nothingUrl, timeout_ms: 300 });
    const slow = await startTestOperator(100_000, o.signing_secret);
    operators.push(slow);
    slow.fault('platform-readiness-probe', 'balance', () => ({ delayMs: 1_000 }));
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
      payload: { base_url: slow.url },
    });
    const view = res.json() as View;
    expect(view.readiness.ready).toBe(false);
    expect(view.readiness.checks.find((c) => c.name === 'balance')?.detail).toMatch(
      /no answer within 300 ms/,
    );
    // The paths answer (400 for a body with no money fields): only the balance failed.
    expect(view.readiness.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['balance']);
  });

  it('a ready operator whose breaker opened gets 503 OPERATOR_UNAVAILABLE, no session', async () => {
    const o = await t.operator();
    const cfg = { failures: 1, cooldownMs: 20_000, maxCooldownMs: 60_000 };
    await updateBreaker(
      t.sql,
      o.operator_id,
      (s) => afterBetAnswer(s, 'failed', 'HTTP 500', Date.now(), cfg),
      Date.now(),
    );
    await new Promise((r) => setTimeout(r, 600)); // the breaker cache
    const { res, created } = await requestAccess(o.api_token);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'OPERATOR_UNAVAILABLE' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(10);
    expect(created).toBe(0);
  });

  it('PATCH and probe refuse bad input and unknown operators', async () => {
    const o = await t.operator();
    const bad = await t.app.inject({
      method: 'PATCH',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
      payload: { timeout_ms: 5 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ detail: expect.stringMatching(/timeout_ms/) });
    const empty = await t.app.inject({
      method: 'PATCH',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
      payload: {},
    });
    expect(empty.statusCode).toBe(400);
    const roundEnd = await t.app.inject({
      method: 'PATCH',
      url: `/admin/operators/${o.operator_id}`,
      headers: admin(),
      payload: { round_close: 'round-end' },
    });
    expect(roundEnd.statusCode).toBe(400);
    expect(roundEnd.json()).toMatchObject({ detail: expect.stringMatching(/round_end_path/) });
    expect(
      (await t.app.inject({ method: 'POST', url: '/admin/operators/opr_nope/probe', headers: admin() }))
        .statusCode,
    ).toBe(404);
  });
});
