import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  betBody,
  rewardsBody,
  rollbackBody,
  startTestSandbox,
  type TestSandbox,
  winABody,
} from '../../tests/support/sandbox.ts';

describe('operator sandbox idempotency and refusals', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ SANDBOX_INITIAL_BALANCE: '50.00' });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('a replay with the same body (any key order) returns the first answer and moves nothing', async () => {
    const first = await sb.call('POST', '/wallet/bet', betBody(100, 10, 'i1'));
    const body = betBody(100, 10, 'i1');
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await sb.call('POST', '/wallet/bet', reordered);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(await sb.balance('i1')).toBe(4_000);
  });

  it('the same provider_tx_id with a different body is 409 IDEMPOTENCY_CONFLICT', async () => {
    const r = await sb.call('POST', '/wallet/bet', betBody(100, 11, 'i1'));
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(await sb.balance('i1')).toBe(4_000);
  });

  it('a bet over the balance is 402 INSUFFICIENT_FUNDS and writes nothing', async () => {
    const before = await sb.txCount();
    const r = await sb.call('POST', '/wallet/bet', betBody(104, 40.01, 'i1'));
    expect(r.status).toBe(402);
    expect(r.json).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    expect(await sb.balance('i1')).toBe(4_000);
    expect(await sb.txCount()).toBe(before);
    // Exactly the balance is allowed: the refusal was not remembered.
    expect((await sb.call('POST', '/wallet/bet', betBody(104, 40, 'i1'))).status).toBe(200);
    expect(await sb.balance('i1')).toBe(0);
  });

  it('a rollback of an unknown bet is acknowledged unchanged, and the late bet is 409 BET_ROLLED_BACK', async () => {
    const rb = await sb.call('POST', '/wallet/rollback', rollbackBody('A', 202, 200, 5, 'i2'));
    expect(rb.status).toBe(200);
    expect(rb.json).toMatchObject({ old_balance: '50.00', new_balance: '50.00', provider_tx_id: '202' });
    const late = await sb.call('POST', '/wallet/bet', betBody(200, 5, 'i2'));
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: { code: 'BET_ROLLED_BACK' } });
    expect(await sb.balance('i2')).toBe(5_000);
  });

  it('a second rollback of a bet (same id, or another id, or form B) refunds once and returns the first answer', async () => {
    await sb.call('POST', '/wallet/bet', betBody(300, 7.5, 'i3'));
    const first = await sb.call('POST', '/wallet/rollback', rollbackBody('A', 302, 300, 7.5, 'i3'));
    const same = await sb.call('POST', '/wallet/rollback', rollbackBody('A', 302, 300, 7.5, 'i3'));
    const otherId = await sb.call('POST', '/wallet/rollback', rollbackBody('A', 306, 300, 7.5, 'i3'));
    const formB = await sb.call('GET', '/webhooks/platform/rollback', rollbackBody('B', 310, 300, 7.5, 'i3'));
    expect(first.json).toMatchObject({ old_balance: '42.50', new_balance: '50.00' });
    for (const r of [same, otherId, formB]) {
      expect(r.status).toBe(200);
      expect(r.json).toEqual(first.json);
    }
    expect(await sb.balance('i3')).toBe(5_000);
  });

  it('a win for an unknown bet is 409 BET_NOT_FOUND in both forms; nothing is written', async () => {
    const before = await sb.txCount();
    const a = await sb.call('POST', '/wallet/win', winABody(401, 400, 5, 'i4'));
    expect(a.status).toBe(409);
    expect(a.json).toMatchObject({ error: { code: 'BET_NOT_FOUND' } });
    const b = await sb.call(
      'GET',
      '/webhooks/platform/rewards',
      rewardsBody(405, 5, 'i4', { round_id: '999' }),
    );
    expect(b.status).toBe(409);
    expect(b.json).toMatchObject({ error: { code: 'BET_NOT_FOUND' } });
    expect(await sb.txCount()).toBe(before);
  });

  it('a win of a free bet (mode free) needs no bet and is credited once', async () => {
    const body = { ...winABody(4001, 4000, 2.5, 'i4f'), mode: 'free', bonus_code: 'WELCOME' };
    const first = await sb.call('POST', '/wallet/win', body);
    const again = await sb.call('POST', '/wallet/win', body);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ old_balance: '50.00', new_balance: '52.50' });
    expect(again.json).toEqual(first.json);
    expect(await sb.balance('i4f')).toBe(5_250);
  });

  it("a win on another player's bet is BET_NOT_FOUND; a win on a rolled-back bet is BET_ROLLED_BACK", async () => {
    await sb.call('POST', '/wallet/bet', betBody(500, 1, 'i5'));
    const other = await sb.call('POST', '/wallet/win', winABody(501, 500, 2, 'i6'));
    expect(other.json).toMatchObject({ error: { code: 'BET_NOT_FOUND' } });
    await sb.call('POST', '/wallet/rollback', rollbackBody('A', 502, 500, 1, 'i5'));
    const win = await sb.call('POST', '/wallet/win', winABody(501, 500, 2, 'i5'));
    expect(win.status).toBe(409);
    expect(win.json).toMatchObject({ error: { code: 'BET_ROLLED_BACK' } });
    expect(await sb.balance('i5')).toBe(5_000);
  });

  it('parallel copies of one bet, win and rollback each apply once with one shared answer', async () => {
    const N = 12;
    const bets = await Promise.all(
      Array.from({ length: N }, () => sb.call('POST', '/wallet/bet', betBody(600, 3, 'p1'))),
    );
    expect(bets.every((r) => r.status === 200)).toBe(true);
    expect(new Set(bets.map((r) => JSON.stringify(r.json))).size).toBe(1);
    expect(await sb.balance('p1')).toBe(4_700);

    const wins = await Promise.all(
      Array.from({ length: N }, () => sb.call('POST', '/wallet/win', winABody(601, 600, 6, 'p1'))),
    );
    expect(new Set(wins.map((r) => `${r.status}${JSON.stringify(r.json)}`)).size).toBe(1);
    expect(await sb.balance('p1')).toBe(5_300);

    await sb.call('POST', '/wallet/bet', betBody(604, 10, 'p1'));
    const rbs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        i % 2 === 0
          ? sb.call('POST', '/wallet/rollback', rollbackBody('A', 606, 604, 10, 'p1'))
          : sb.call('GET', '/webhooks/platform/rollback', rollbackBody('B', 610 + i * 4, 604, 10, 'p1')),
      ),
    );
    expect(rbs.every((r) => r.status === 200)).toBe(true);
    expect(new Set(rbs.map((r) => JSON.stringify(r.json))).size).toBe(1);
    expect(await sb.balance('p1')).toBe(5_300);

    const [ledger] = await sb.sql`select count(*)::int as n from transactions where user_id = 'p1'`;
    expect(ledger?.n).toBe(4);
  });

  it('parallel first sights of one id on two accounts: one applies, the other is a conflict', async () => {
    const [x, y] = await Promise.all([
      sb.call('POST', '/wallet/bet', betBody(700, 1, 'q1')),
      sb.call('POST', '/wallet/bet', betBody(700, 1, 'q2')),
    ]);
    expect([x?.status, y?.status].sort()).toEqual([200, 409]);
    const loser = x?.status === 409 ? x : y;
    expect(loser?.json).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    const total = ((await sb.balance('q1')) ?? 5_000) + ((await sb.balance('q2')) ?? 5_000);
    expect(total).toBe(9_900);
  });

  it('a parallel rollback and late bet never both move money', async () => {
    const [bet, rb] = await Promise.all([
      sb.call('POST', '/wallet/bet', betBody(800, 4, 'p2')),
      sb.call('POST', '/wallet/rollback', rollbackBody('A', 802, 800, 4, 'p2')),
    ]);
    expect(rb.status).toBe(200);
    // Either the bet came first (debited, then refunded) or the rollback did (bet refused).
    if (bet.status === 200) expect(rb.json).toMatchObject({ new_balance: '50.00', old_balance: '46.00' });
    else expect(bet.json).toMatchObject({ error: { code: 'BET_ROLLED_BACK' } });
    expect(await sb.balance('p2')).toBe(5_000);
  });
});
