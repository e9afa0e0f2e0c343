/**
 * Free bets registered as bets, form-B rollbacks found by round, and the strict mode
 * (mode.ts): a free bet's registration (mode free, amount 0) is booked as a bet that
 * moves no money and its win is linked to it, on both forms; a form-B rollback without linked_tx_id
 * refunds the player's bet of that round. Strict refuses a callback body with a field more or less
 * than its schema (schemas/callbacks), a free bet's win whose free bet was never registered, and
 * answers with the status in the body; lenient keeps today's leniency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Reply,
  type SagaBet,
  sagaRequest,
  startTestSandbox,
  type TestSandbox,
} from '../../tests/support/sandbox.ts';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox({ SANDBOX_INITIAL_BALANCE: '100.00', SANDBOX_STRICT: 'true' });
});
afterAll(async () => {
  await sb?.close();
});

async function mode(strict: boolean): Promise<void> {
  expect((await sb.put('/_sandbox/mode', { strict })).status).toBe(200);
}

const PATHS = {
  A: { bet: '/wallet/bet', win: '/wallet/win', rollback: '/wallet/rollback' },
  B: { bet: '/wallet/bet', win: '/webhooks/platform/rewards', rollback: '/webhooks/platform/rollback' },
} as const;

/** Sends `body` as the `kind` callback of `form`. */
function send(
  form: 'A' | 'B',
  kind: 'bet' | 'win' | 'rollback',
  body: Record<string, unknown>,
): Promise<Reply> {
  return sb.call(form === 'B' && kind !== 'bet' ? 'GET' : 'POST', PATHS[form][kind], body);
}

/** The saga's own body for `kind` of bet `b`, sent. */
const saga = (form: 'A' | 'B', kind: 'bet' | 'win' | 'rollback', b: SagaBet) =>
  send(form, kind, sagaRequest(form, kind, b));

async function ledger(
  user: string,
): Promise<{ kind: string; linked_tx_id: string | null; delta_minor: number }[]> {
  const res = await sb.app.inject({ method: 'GET', url: `/_sandbox/ledger?user_id=${user}&currency=USD` });
  return res.json().transactions;
}

let next = 5_000;
const ids = () => {
  next += 4;
  return { betTxId: next, round: next };
};

describe.each(['A', 'B'] as const)('form %s', (form) => {
  describe.each([true, false])('strict %s', (strict) => {
    const user = `fb-${form}-${strict}`;
    beforeAll(() => mode(strict));

    it('a free bet is booked as a bet that moves no money, and its win is credited and linked to it', async () => {
      const b = { ...ids(), user, amountMinor: 0, free: true };
      const reg = await saga(form, 'bet', b);
      expect(reg.status).toBe(200);
      expect(reg.json).toMatchObject({ old_balance: '100.00', new_balance: '100.00' });
      if (strict) expect(reg.json).toMatchObject({ status: 'RS_OK' });
      const win = await saga(form, 'win', { ...b, amountMinor: 2_500 });
      expect(win.json).toMatchObject({ old_balance: '100.00', new_balance: '125.00' });
      expect(await ledger(user)).toMatchObject([
        { kind: 'bet', delta_minor: 0 },
        { kind: 'win', linked_tx_id: String(b.betTxId), delta_minor: 2_500 },
      ]);
    });

    it(`a free bet's win without its registration is ${strict ? 'refused' : 'credited (lenient)'}`, async () => {
      const before = (await sb.balance(user)) as number;
      const win = await saga(form, 'win', { ...ids(), user, amountMinor: 1_000, free: true });
      if (strict) {
        expect(win.json).toEqual({
          status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
          message: expect.any(String),
        });
        expect(await sb.balance(user)).toBe(before);
      } else {
        expect(win.status).toBe(200);
        expect(await sb.balance(user)).toBe(before + 1_000);
      }
    });

    it('a free bet of more than 0 is refused and books nothing', async () => {
      const before = await sb.txCount();
      const r = await send(form, 'bet', {
        ...sagaRequest(form, 'bet', { ...ids(), user, amountMinor: 0, free: true }),
        amount: '1.00',
      });
      expect(strict ? r.json?.status : r.status).toBe(strict ? 'RS_ERROR_WRONG_SYNTAX' : 400);
      expect(await sb.txCount()).toBe(before);
    });
  });
});

it('migration 002: a transaction is of mode default (every row before it) or free, nothing else', async () => {
  const [col] = await sb.sql`select column_default from information_schema.columns
                             where table_schema = ${sb.config.sandbox.dbSchema} and table_name = 'transactions'
                               and column_name = 'mode'`;
  expect(col?.column_default).toMatch(/'default'/);
  const checks = await sb.sql`select pg_get_constraintdef(c.oid) as def from pg_constraint c
                              join pg_namespace n on n.oid = c.connamespace
                              where n.nspname = ${sb.config.sandbox.dbSchema} and c.contype = 'c'`;
  expect(checks.map((c) => String(c.def)).join(' ')).toMatch(/mode.*'default'.*'free'/);
});

describe('form B rollback without linked_tx_id (docs/contract.md "Operator callbacks": the fields of Register Earnings)', () => {
  beforeAll(() => mode(true));

  it('refunds the player’s bet of that round, of that amount, once', async () => {
    const user = 'rb-b';
    const round = ids();
    const small = { ...round, user, amountMinor: 300 };
    const big = { betTxId: round.betTxId + 1_000, round: round.round, user, amountMinor: 1_200 };
    await saga('B', 'bet', small);
    await saga('B', 'bet', big);
    const body = sagaRequest('B', 'rollback', big);
    expect(body).not.toHaveProperty('linked_tx_id');
    const rb = await send('B', 'rollback', body);
    expect(rb.json).toMatchObject({ status: 'RS_OK', old_balance: '85.00', new_balance: '97.00' });
    const again = await send('B', 'rollback', body);
    expect(again.json).toMatchObject({ status: 'RS_ERROR_DUPLICATE_TRANSACTION', new_balance: '97.00' });
    expect(await ledger(user)).toContainEqual(
      expect.objectContaining({ kind: 'rollback', linked_tx_id: String(big.betTxId), delta_minor: 1_200 }),
    );
  });

  it('of a bet never booked: acknowledged, nothing moves, and the late bet of that round is refused', async () => {
    const user = 'rb-b-unknown';
    const b = { ...ids(), user, amountMinor: 400 };
    const rb = await saga('B', 'rollback', b);
    expect(rb.json).toMatchObject({ status: 'RS_OK', old_balance: '100.00', new_balance: '100.00' });
    const late = await saga('B', 'bet', b);
    expect(late.json).toMatchObject({ status: 'BET_ROLLED_BACK' });
    expect(await sb.balance(user)).toBe(10_000);
  });
});

describe('strict: exact bodies', () => {
  beforeAll(() => mode(true));
  const b = () => ({ ...ids(), user: 'exact', amountMinor: 100 });

  it.each([
    [
      'a field the form does not list',
      (x: Record<string, unknown>) => ({ ...x, note: 'hi' }),
      /unknown field note/,
    ],
    ['a missing field', ({ extra_data: _, ...x }: Record<string, unknown>) => x, /extra_data/],
    [
      'a string id in form A',
      (x: Record<string, unknown>) => ({ ...x, provider_tx_id: String(x.provider_tx_id) }),
      /provider_tx_id/,
    ],
  ])('a bet with %s is refused (RS_ERROR_WRONG_SYNTAX) and books nothing', async (_name, change, message) => {
    const before = await sb.txCount();
    const r = await send('A', 'bet', change(sagaRequest('A', 'bet', b())));
    expect(r.status).toBe(200);
    expect(r.json?.status).toBe('RS_ERROR_WRONG_SYNTAX');
    expect(String(r.json?.message)).toMatch(message);
    expect(await sb.txCount()).toBe(before);
  });

  it('a form-B rollback that still sends linked_tx_id is refused; lenient takes it', async () => {
    const bet = b();
    await saga('B', 'bet', bet);
    const body = { ...sagaRequest('B', 'rollback', bet), linked_tx_id: String(bet.betTxId) };
    expect((await send('B', 'rollback', body)).json?.message).toMatch(/unknown field linked_tx_id/);
    await mode(false);
    expect((await send('B', 'rollback', body)).json).toMatchObject({
      provider_tx_id: String(bet.betTxId + 2),
    });
    await mode(true);
  });

  it('the saga’s own bodies of every kind pass, and a balance with an extra field does not', async () => {
    for (const form of ['A', 'B'] as const) {
      const bet = b();
      expect((await saga(form, 'bet', bet)).json?.status).toBe('RS_OK');
      expect((await saga(form, 'win', { ...bet, amountMinor: 0 })).json?.status).toBe('RS_OK');
    }
    const balance = { user_id: 'exact', currency: 'USD', session_token: 'sess-1' };
    expect((await sb.call('POST', '/wallet/balance', balance)).json).toMatchObject({
      status: 'RS_OK',
      balance: expect.any(String),
    });
    const extra = await sb.call('POST', '/wallet/balance', { ...balance, amount: '1.00' });
    expect(extra.json?.status).toBe('RS_ERROR_WRONG_SYNTAX');
  });
});
