import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.ts';
import {
  balanceBody,
  betBody,
  rewardsBody,
  rollbackBody,
  startTestSandbox,
  type TestSandbox,
  winABody,
} from '../../tests/support/sandbox.ts';
import { SANDBOX_MIGRATIONS_DIR } from './app.ts';

const MOVE_KEYS = ['new_balance', 'old_balance', 'operator_tx_id'];
const ECHO_KEYS = [...MOVE_KEYS, 'currency', 'provider', 'provider_tx_id', 'user_id'].sort();

describe('operator sandbox callbacks (both forms)', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ SANDBOX_INITIAL_BALANCE: '100.00' });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('the ledger migrations are applied once, and a negative balance is impossible', async () => {
    expect(await migrate(sb.sql, sb.config.sandbox.dbSchema, SANDBOX_MIGRATIONS_DIR)).toEqual([]);
    await expect(
      sb.sql`insert into accounts (user_id, currency, balance_minor) values ('neg', 'USD', -1)`,
    ).rejects.toThrow(/check constraint/);
  });

  it('balance creates the account at first sight with the initial balance', async () => {
    const r = await sb.call('POST', '/wallet/balance', balanceBody('bal-user', 'EUR'));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      user_id: 'bal-user',
      currency: 'EUR',
      balance: '100.00',
      platform_session_token: 'sess-1',
    });
    expect(await sb.balance('bal-user', 'EUR')).toBe(10_000);
  });

  it('bet debits, form-A win credits, with the contract fields as strings', async () => {
    const bet = await sb.call('POST', '/wallet/bet', betBody(4, 12.5, 'a1'));
    expect(bet.status).toBe(200);
    expect(Object.keys(bet.json ?? {}).sort()).toEqual(MOVE_KEYS);
    expect(bet.json).toMatchObject({ old_balance: '100.00', new_balance: '87.50' });
    expect(typeof bet.json?.operator_tx_id).toBe('string');

    const win = await sb.call('POST', '/wallet/win', winABody(5, 4, 25, 'a1'));
    expect(win.status).toBe(200);
    expect(Object.keys(win.json ?? {}).sort()).toEqual(MOVE_KEYS);
    expect(win.json).toMatchObject({ old_balance: '87.50', new_balance: '112.50' });
    expect(win.json?.operator_tx_id).not.toBe(bet.json?.operator_tx_id);
    expect(await sb.balance('a1')).toBe(11_250);
  });

  it('form-B rewards (GET with a JSON body) credits the bet of that round and echoes the ids', async () => {
    await sb.call('POST', '/wallet/bet', betBody(8, 10, 'b1', { round_id: '777' }));
    const r = await sb.call(
      'GET',
      '/webhooks/platform/rewards',
      rewardsBody(9, 19.6, 'b1', { round_id: '777' }),
    );
    expect(r.status).toBe(200);
    expect(Object.keys(r.json ?? {}).sort()).toEqual(ECHO_KEYS);
    expect(r.json).toMatchObject({
      old_balance: '90.00',
      new_balance: '109.60',
      user_id: 'b1',
      currency: 'USD',
      provider: 'casino-platform',
      provider_tx_id: '9',
    });
    const ledger = await sb.app.inject({ method: 'GET', url: '/_sandbox/ledger?user_id=b1&currency=USD' });
    const win = ledger.json().transactions.find((t: { kind: string }) => t.kind === 'win');
    expect(win).toMatchObject({
      provider_tx_id: '9',
      linked_tx_id: '8',
      amount_minor: 1960,
      delta_minor: 1960,
    });
  });

  it('rollback form A (POST) refunds the bet and echoes the ids', async () => {
    await sb.call('POST', '/wallet/bet', betBody(12, 30, 'r1'));
    const r = await sb.call('POST', '/wallet/rollback', rollbackBody('A', 14, 12, 30, 'r1'));
    expect(r.status).toBe(200);
    expect(Object.keys(r.json ?? {}).sort()).toEqual(ECHO_KEYS);
    expect(r.json).toMatchObject({ old_balance: '70.00', new_balance: '100.00', provider_tx_id: '14' });
  });

  it('rollback form B (GET with a JSON body) refunds the bet', async () => {
    await sb.call('POST', '/wallet/bet', betBody(16, 0.05, 'r2'));
    const r = await sb.call('GET', '/webhooks/platform/rollback', rollbackBody('B', 18, 16, 0.05, 'r2'));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      old_balance: '99.95',
      new_balance: '100.00',
      provider_tx_id: '18',
      user_id: 'r2',
    });
    expect(await sb.balance('r2')).toBe(10_000);
  });

  it('the ledger read lists the balance and every transaction in order', async () => {
    const res = await sb.app.inject({ method: 'GET', url: '/_sandbox/ledger?user_id=a1&currency=USD' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ user_id: 'a1', currency: 'USD', balance: '112.50', balance_minor: 11_250 });
    expect(
      body.transactions.map((t: { kind: string; delta_minor: number }) => [t.kind, t.delta_minor]),
    ).toEqual([
      ['bet', -1250],
      ['win', 2500],
    ]);
    const accounts = (await sb.app.inject({ method: 'GET', url: '/_sandbox/accounts' })).json().accounts;
    expect(accounts).toContainEqual({
      user_id: 'a1',
      currency: 'USD',
      balance: '112.50',
      balance_minor: 11_250,
    });
  });

  it('ledger read: missing parameters 400, unknown account 404', async () => {
    const missing = await sb.app.inject({ method: 'GET', url: '/_sandbox/ledger?user_id=a1' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.code).toBe('BAD_REQUEST');
    const unknown = await sb.app.inject({
      method: 'GET',
      url: '/_sandbox/ledger?user_id=nobody&currency=USD',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('ACCOUNT_NOT_FOUND');
  });

  it('an unknown route is 404 with the error body', async () => {
    const r = await sb.call('POST', '/wallet/nothing', balanceBody());
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('health, ready and metrics (callbacks counted by kind, form and status)', async () => {
    expect((await sb.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
    expect((await sb.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    const text = (await sb.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/sandbox_callbacks_total\{kind="bet",form="A",status="200"[^}]*\} 4/);
    expect(text).toMatch(/sandbox_callbacks_total\{kind="win",form="B",status="200"[^}]*\} 1/);
    expect(text).toMatch(/sandbox_callbacks_total\{kind="balance",form="A",status="200"[^}]*\} 1/);
    expect(text).toMatch(/process_resident_memory_bytes\{service="operator-sandbox"\} [1-9]/);
    expect(text).toMatch(
      /http_request_duration_seconds_count\{[^}]*route="\/wallet\/bet",status_code="200"[^}]*\} 4/,
    );
  });
  // Last: the metrics test above counts the callbacks made before it.
  it("answers balances in each currency's precision and takes decimal-string or number amounts", async () => {
    // SANDBOX_INITIAL_BALANCE 100.00: 100 JPY, 100.000 KWD, 100.00000000 BTC.
    const cases = [
      { currency: 'JPY', first: '100', amount: '50', rest: '50', restMinor: 50 },
      { currency: 'KWD', first: '100.000', amount: 1.25, rest: '98.750', restMinor: 98_750 },
      {
        currency: 'BTC',
        first: '100.00000000',
        amount: '0.00000001',
        rest: '99.99999999',
        restMinor: 9_999_999_999,
      },
    ];
    for (const [i, c] of cases.entries()) {
      const user = `fx-${c.currency}`;
      const balance = await sb.call('POST', '/wallet/balance', balanceBody(user, c.currency));
      expect(balance.json, c.currency).toMatchObject({ balance: c.first, currency: c.currency });
      const bet = await sb.call('POST', '/wallet/bet', betBody(100 + 4 * i, 1, user, c));
      expect(bet.status, c.currency).toBe(200);
      expect(bet.json, c.currency).toMatchObject({ old_balance: c.first, new_balance: c.rest });
      expect(await sb.balance(user, c.currency)).toBe(c.restMinor);
    }
    const wrong = await sb.call(
      'POST',
      '/wallet/bet',
      betBody(120, 1, 'fx-JPY', { currency: 'JPY', amount: '0.5' }),
    );
    expect(wrong.status).toBe(400);
  });
});
