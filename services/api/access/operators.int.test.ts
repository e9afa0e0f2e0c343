import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessTestApi, startAccessTestApi } from '../../../tests/support/access.ts';

let t: AccessTestApi;
let op: { operator_id: string; api_token: string; signing_secret: string };
const adminH = () => ({ 'x-api-key': t.adminKey });

beforeAll(async () => {
  t = await startAccessTestApi();
  op = await t.operator({ name: 'main', callback_form: 'B', base_url: 'http://wallet.test:9000/' });
  await t.operator();
});
afterAll(async () => {
  await t?.close();
});

describe('operators registry (admin)', () => {
  it('creates with defaults, shows secrets once, stores only the token hash', async () => {
    expect(op.api_token).toMatch(/^op_[0-9a-f]{64}$/);
    expect(op.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [row] = await t.sql<{ token_hash: string; signing_secret: string; base_url: string }[]>`
      select token_hash, signing_secret, base_url from operators where operator_id = ${op.operator_id}`;
    expect(row?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.token_hash).not.toBe(op.api_token);
    expect(row?.signing_secret).toBe(op.signing_secret);
    const got = await t.app.inject({
      method: 'GET',
      url: `/admin/operators/${op.operator_id}`,
      headers: adminH(),
    });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({
      operator_id: op.operator_id,
      callback_form: 'B',
      base_url: 'http://wallet.test:9000',
      bet_path: '/wallet/bet',
      win_path: '/wallet/win',
      balance_path: '/wallet/balance',
      rollback_path: '/wallet/rollback',
      timeout_ms: 10_000,
      // The published schedule (rules/retry/schedule.ts), the seed's answers, zero-amount round closes.
      retry_policy: {
        delaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
        jitter: 0.1,
      },
      answer_table: 'seed',
      round_close: 'zero-win',
      round_end_path: null,
      amount_format: 'string',
      disabled_at: null,
    });
    const list = await t.app.inject({ method: 'GET', url: '/admin/operators', headers: adminH() });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(op.signing_secret);
    expect(list.body).not.toContain('token_hash');
    expect((list.json() as { operators: unknown[] }).operators.length).toBeGreaterThanOrEqual(2);
  });

  const bad: [string, 'none' | 'reader' | 'admin', string, string, unknown, number][] = [
    [
      'no key',
      'none',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a' },
      401,
    ],
    [
      'a key without admin',
      'reader',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a' },
      403,
    ],
    [
      'callback_form C',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'C', base_url: 'http://a' },
      400,
    ],
    [
      'a ftp base_url',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'ftp://a' },
      400,
    ],
    [
      'a relative bet_path',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', bet_path: 'bet' },
      400,
    ],
    [
      'timeout_ms 50',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', timeout_ms: 50 },
      400,
    ],
    [
      'max < min timeout',
      'admin',
      'POST',
      '/admin/operators',
      {
        name: 'x',
        callback_form: 'A',
        base_url: 'http://a',
        retry_policy: { minTimeoutMs: 10, maxTimeoutMs: 5 },
      },
      400,
    ],
    [
      'a retry schedule with a negative wait',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', retry_policy: { delaysMs: [1000, -1] } },
      400,
    ],
    [
      'an unknown answer preset',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', answer_table: 'lenient' },
      400,
    ],
    [
      'a round-end close without its path',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', round_close: 'round-end' },
      400,
    ],
    [
      'an unknown amount format',
      'admin',
      'POST',
      '/admin/operators',
      { name: 'x', callback_form: 'A', base_url: 'http://a', amount_format: 'cents' },
      400,
    ],
    ['an unknown id', 'admin', 'GET', '/admin/operators/opr_nope', undefined, 404],
    ['disabling an unknown id', 'admin', 'DELETE', '/admin/operators/opr_nope', undefined, 404],
  ];
  it.each(bad)(
    'refuses %s with problem JSON and writes nothing',
    async (_n, who, method, url, payload, status) => {
      let headers: Record<string, string> = {};
      if (who === 'admin') headers = adminH();
      if (who === 'reader') {
        const k = await t.app.inject({
          method: 'POST',
          url: '/api/auth/keys',
          headers: adminH(),
          payload: { name: 'reader', scopes: ['read:rounds'], kind: 'private' },
        });
        headers = { 'x-api-key': (k.json() as { secret: string }).secret };
      }
      const before = await t.count('operators');
      const res = await t.app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(payload ? { payload: payload as object } : {}),
      });
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status });
      expect(await t.count('operators')).toBe(before);
    },
  );
});
