import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balanceBody,
  betBody,
  errorMessage,
  rewardsBody,
  rollbackBody,
  startTestSandbox,
  type TestSandbox,
  winABody,
} from '../../tests/support/sandbox.ts';

describe('operator sandbox: bad signatures and bad input write nothing', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox();
  });
  afterAll(async () => {
    await sb?.close();
  });

  async function expectNothingWritten(): Promise<void> {
    expect(await sb.txCount()).toBe(0);
    const [row] = await sb.sql`select count(*)::int as n from accounts`;
    expect(row?.n).toBe(0);
  }

  it.each([
    ['missing headers', { sign: 'none' }],
    ['another secret', { sign: `whsec_${randomBytes(32).toString('base64')}` }],
    ['a timestamp 10 minutes old', { at: new Date(Date.now() - 600_000) }],
  ] as const)('a callback with %s is 401 INVALID_SIGNATURE', async (_name, options) => {
    for (const [method, url, body] of [
      ['POST', '/wallet/bet', betBody(4, 1)],
      ['POST', '/wallet/balance', balanceBody()],
      ['GET', '/webhooks/platform/rollback', rollbackBody('B', 6, 4, 1)],
    ] as const) {
      const r = await sb.call(method, url, body, options);
      expect(r.status, url).toBe(401);
      expect(r.json).toMatchObject({ error: { code: 'INVALID_SIGNATURE' } });
    }
    await expectNothingWritten();
  });

  it('a body changed after signing is 401', async () => {
    const signed = JSON.stringify(betBody(4, 1));
    const headers = sb.signedHeaders(signed);
    const res = await sb.app.inject({
      method: 'POST',
      url: '/wallet/bet',
      headers,
      payload: signed.replace('"amount":1', '"amount":2'),
    });
    expect(res.statusCode).toBe(401);
    await expectNothingWritten();
  });

  it.each([
    ['invalid JSON', '{"user_id": ', /not valid JSON/],
    ['a JSON array', '[1,2]', /must be a JSON object/],
  ])('%s is 400 BAD_REQUEST', async (_name, raw, message) => {
    const r = await sb.call('POST', '/wallet/bet', null, { raw });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: 'BAD_REQUEST' } });
    expect(errorMessage(r)).toMatch(message);
    await expectNothingWritten();
  });

  const bet = betBody(8, 1);
  const { user_id: _u, ...betWithoutUser } = bet;
  it.each([
    ['a missing user_id', '/wallet/bet', betWithoutUser, /user_id/],
    ['a negative amount', '/wallet/bet', { ...bet, amount: -1 }, /amount: a finite non-negative/],
    ['a non-finite amount (1e400)', '/wallet/bet', null, /amount/],
    ['an amount with three decimals', '/wallet/bet', { ...bet, amount: 1.005 }, /at most 2 decimals \(USD\)/],
    ['a string amount with three decimals', '/wallet/bet', { ...bet, amount: '1.005' }, /at most 2 decimals/],
    [
      'a JPY amount with decimals',
      '/wallet/bet',
      { ...bet, currency: 'JPY', amount: '1.0' },
      /at most 0 decimals/,
    ],
    ['an amount in exponent form', '/wallet/bet', { ...bet, amount: '1e2' }, /amount/],
    ['an amount that is neither number nor string', '/wallet/bet', { ...bet, amount: [1] }, /amount/],
    ['a zero bet', '/wallet/bet', { ...bet, amount: 0 }, /bet amount must be > 0/],
    ['a string provider_tx_id in form A', '/wallet/bet', { ...bet, provider_tx_id: '8' }, /provider_tx_id/],
    ['a fractional provider_tx_id', '/wallet/bet', { ...bet, provider_tx_id: 8.5 }, /provider_tx_id/],
    ['an unknown currency', '/wallet/bet', { ...bet, currency: 'XXX' }, /currency/],
    ['a precious metal', '/wallet/bet', { ...bet, currency: 'XAU' }, /currency/],
    ['a wrong action', '/wallet/bet', { ...bet, action: 'win' }, /action/],
    ['an unknown mode', '/wallet/bet', { ...bet, mode: 'turbo' }, /mode/],
    [
      'a form-A win without linked_tx_id',
      '/wallet/win',
      { ...winABody(9, 8, 1), linked_tx_id: undefined },
      /linked_tx_id/,
    ],
    [
      'a balance without session_token',
      '/wallet/balance',
      { user_id: 'u1', currency: 'USD' },
      /session_token/,
    ],
  ])('%s is 400 with a message naming the field', async (_name, url, body, message) => {
    const raw = body === null ? JSON.stringify(bet).replace('"amount":1', '"amount":1e400') : undefined;
    const r = await sb.call('POST', url, body, raw === undefined ? {} : { raw });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: 'BAD_REQUEST' } });
    expect(errorMessage(r)).toMatch(message);
    await expectNothingWritten();
  });

  // A form-B rollback without linked_tx_id is the seed's: strict.int.test.ts.
  it('form B with integer ids is 400', async () => {
    const intIds = await sb.call('GET', '/webhooks/platform/rollback', {
      ...rollbackBody('B', 6, 4, 1),
      provider_tx_id: 6,
    });
    expect(intIds.status).toBe(400);
    expect(errorMessage(intIds)).toMatch(/provider_tx_id/);
    const rewards = await sb.call('GET', '/webhooks/platform/rewards', { ...rewardsBody(9, 1), amount: -5 });
    expect(rewards.status).toBe(400);
    await expectNothingWritten();
  });

  it('a non-JSON content type is refused with the error body', async () => {
    const res = await sb.app.inject({
      method: 'POST',
      url: '/wallet/bet',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.code).toBe('BAD_REQUEST');
    await expectNothingWritten();
  });
});
