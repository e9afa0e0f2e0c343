/**
 * The dispatcher's statements over wallet_callbacks (store.ts) against real Postgres, in a migrated
 * schema of their own: `finishAttempts` stores a batch of results in one statement, each fenced by
 * its own lease (a result whose lease another instance took is not stored, and its event is not
 * added), nulls stay nulls, a retry keeps or moves its next attempt, and the events reach the outbox
 * in the batch's order; `leaseCallbacks` keeps a player's debits in order and a bet's win behind
 * its debit and says until when each lease holds; `extendLease` moves a lease only for its holder
 * and says whether it still held it; `pullForward` makes an operator's waiting retries due now,
 * once each, and touches nothing else.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../lib/db/pool.ts';
import { redriveCallbacks } from '../../lib/db/wallet-callbacks.ts';
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import { insertCallbacks, startCallbackSchema } from '../../tests/support/wallet-callbacks.ts';
import {
  type AttemptRecord,
  extendLeases,
  finishAttempts,
  leaseCallbacks,
  leaseKey,
  pullForward,
  releaseLease,
  SKIPPED,
} from './store.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
let db: Awaited<ReturnType<typeof startCallbackSchema>>;
let sql: Sql;

beforeAll(async () => {
  db = await startCallbackSchema('t_wstore', []);
  sql = db.sql;
});

afterAll(async () => {
  await db?.close();
});

afterEach(async () => {
  await sql`delete from wallet_callbacks`;
  await sql`delete from wallet_outbox`;
});

/** Inserts callbacks due at T0: [txId, kind, player] (tests/support/wallet-callbacks.ts: a win's or a
 * close's bet is txId − 1, a player's callbacks are in txId order). */
const due = (rows: [number, CallbackJob['kind'], string][]) =>
  insertCallbacks(
    sql,
    rows.map(([txId, kind, userId]) => ({
      txId,
      kind,
      userId,
      status: 'due',
      nextAttemptAt: T0,
      updatedAt: T0,
    })),
  );

const record = (over: Partial<AttemptRecord>): AttemptRecord => ({
  status: 'done',
  nextAttemptAt: null,
  answer: 'ok',
  code: null,
  error: null,
  request: '{"a":1}',
  response: 'HTTP 200 {}',
  sent: null,
  event: null,
  ...over,
});

const row = async (txId: number) => {
  const [r] = await sql<
    {
      status: string;
      next_attempt_at: string;
      leased_by: string | null;
      lease_until: string | null;
      last_answer: string | null;
      last_code: string | null;
      last_error: string | null;
      last_request: string | null;
      last_response: string | null;
    }[]
  >`select status, next_attempt_at::text, leased_by, lease_until::text, last_answer, last_code, last_error,
           last_request, last_response
    from wallet_callbacks where tx_id = ${txId}`;
  return r;
};

describe('finishAttempts', () => {
  it('stores a batch in one statement, each result fenced by its own lease', async () => {
    await due([
      [1, 'bet', 'u-1'],
      [3, 'bet', 'u-2'],
      [5, 'bet', 'u-3'],
    ]);
    const leased = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    expect(leased.map((c) => c.txId).sort()).toEqual([1, 3, 5]);
    // Another instance took 3 over after saga-a's lease ran out.
    await sql`update wallet_callbacks set leased_by = 'saga-b' where tx_id = 3`;

    const ev = (n: number) => ({ key: `op-1:u-${n}`, value: Buffer.from([n, 0, 255]) });
    const r = await finishAttempts(
      sql,
      'saga-a',
      [
        { txId: 5, attempts: 1, record: record({ event: ev(5) }) },
        { txId: 3, attempts: 1, record: record({ event: ev(3) }) },
        {
          txId: 1,
          attempts: 1,
          record: record({
            status: 'due',
            nextAttemptAt: T0 + 60_000,
            answer: 'failed',
            code: '500',
            error: 'HTTP 500',
            response: 'HTTP 500 oops',
            event: ev(1),
          }),
        },
      ],
      T0 + 10,
    );

    expect([...r.held].sort()).toEqual([1, 5]);
    expect(r.outboxIds).toHaveLength(2);
    // In the batch's order: 5's event, then 1's; 3's was not added.
    const outbox = await sql<{ id: string; key: string; value: Buffer }[]>`
      select id::text, key, value from wallet_outbox order by id`;
    expect(outbox.map((o) => [o.key, [...o.value]])).toEqual([
      ['op-1:u-5', [5, 0, 255]],
      ['op-1:u-1', [1, 0, 255]],
    ]);
    expect(outbox.map((o) => BigInt(o.id))).toEqual(r.outboxIds);

    expect(await row(5)).toMatchObject({
      status: 'done',
      leased_by: null,
      lease_until: null,
      last_answer: 'ok',
    });
    expect(await row(1)).toMatchObject({
      status: 'due',
      next_attempt_at: String(T0 + 60_000),
      last_answer: 'failed',
      last_code: '500',
      last_error: 'HTTP 500',
      last_response: 'HTTP 500 oops',
    });
    // Untouched: still saga-b's, in flight.
    expect(await row(3)).toMatchObject({ status: 'in_flight', leased_by: 'saga-b', last_answer: null });
  });

  it('keeps nulls as nulls and the next attempt when the result has none', async () => {
    await due([[7, 'close', 'u-1']]);
    await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    const r = await finishAttempts(
      sql,
      'saga-a',
      [
        {
          txId: 7,
          attempts: 1,
          record: SKIPPED,
        },
      ],
      T0 + 10,
    );
    expect([...r.held]).toEqual([7]);
    expect(r.outboxIds).toEqual([]);
    expect(await row(7)).toEqual({
      status: 'skipped',
      next_attempt_at: String(T0),
      leased_by: null,
      lease_until: null,
      last_answer: null,
      last_code: null,
      last_error: null,
      last_request: null,
      last_response: null,
    });
  });

  it('stores nothing for an empty batch or callbacks it does not hold', async () => {
    expect(await finishAttempts(sql, 'saga-a', [], T0)).toEqual({ held: new Set(), outboxIds: [] });
    await due([[9, 'bet', 'u-1']]);
    const r = await finishAttempts(sql, 'saga-a', [{ txId: 9, attempts: 0, record: record({}) }], T0);
    expect(r.held.size).toBe(0);
    expect((await row(9))?.status).toBe('due');
  });
});

describe('leaseCallbacks', () => {
  it("leases a player's next debit and a bet's win only after its debit is stored", async () => {
    await due([
      [11, 'bet', 'u-1'],
      [13, 'bet', 'u-1'],
      [12, 'win', 'u-1'],
      [21, 'bet', 'u-2'],
    ]);
    const first = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    expect(first.map((c) => c.txId).sort()).toEqual([11, 21]);
    await finishAttempts(sql, 'saga-a', [{ txId: 11, attempts: 1, record: record({}) }], T0 + 5);
    const second = await leaseCallbacks(sql, 'saga-a', 10, T0 + 5, 15_000);
    expect(second.map((c) => c.txId).sort()).toEqual([12, 13]);
  });
});

describe('a lease is fenced by its holder and its attempt number', () => {
  it('extends the leases of their holder, never backwards, and names those it no longer holds', async () => {
    await due([
      [31, 'win', 'u-3'],
      [41, 'win', 'u-4'],
    ]);
    const leased = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    expect(leased.map((c) => [c.txId, c.attempts, c.leaseUntil])).toEqual([
      [31, 1, T0 + 15_000],
      [41, 1, T0 + 15_000],
    ]);
    // Waiting for a send slot: the keeper moves both leases on.
    expect(await extendLeases(sql, 'saga-a', leased, T0 + 25_000)).toEqual(new Set(['31:1', '41:1']));
    expect((await row(31))?.lease_until).toBe(String(T0 + 25_000));
    // Never backwards.
    await extendLeases(sql, 'saga-a', leased, T0 + 20_000);
    expect((await row(31))?.lease_until).toBe(String(T0 + 25_000));
    // 41's lease ran out and saga-b took it: saga-a learns it and changes nothing of 41.
    await sql`update wallet_callbacks set lease_until = ${T0 + 1} where tx_id = 41`;
    const [taken] = await leaseCallbacks(sql, 'saga-b', 10, T0 + 2, 15_000);
    expect(taken?.txId).toBe(41);
    expect(await extendLeases(sql, 'saga-a', leased, T0 + 60_000)).toEqual(new Set(['31:1']));
    expect(await row(41)).toMatchObject({ leased_by: 'saga-b', lease_until: String(T0 + 15_002) });
  });

  it('a copy whose own lease ran out and was leased again by the same instance extends, stores and releases nothing', async () => {
    await due([[51, 'bet', 'u-5']]);
    const [first] = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    // The lease runs out while the first copy waits; saga-a's next look leases it again.
    const [second] = await leaseCallbacks(sql, 'saga-a', 10, T0 + 15_001, 15_000);
    if (!first || !second) throw new Error('both leases expected');
    expect([first.attempts, second.attempts]).toEqual([1, 2]);
    expect(leaseKey(first)).not.toBe(leaseKey(second));
    // The first copy reaches its send slot: its extend fails, so it does not send.
    expect(await extendLeases(sql, 'saga-a', [first], T0 + 40_000)).toEqual(new Set());
    // Nor can it store a result or release the second copy's lease.
    const ev = { key: 'op-1:u-5', value: Buffer.from([51]) };
    const stale = await finishAttempts(
      sql,
      'saga-a',
      [{ ...first, record: record({ event: ev }) }],
      T0 + 16_000,
    );
    expect(stale).toEqual({ held: new Set(), outboxIds: [] });
    await releaseLease(sql, 'saga-a', first, T0 + 16_000, T0 + 16_000);
    expect(await row(51)).toMatchObject({
      status: 'in_flight',
      leased_by: 'saga-a',
      lease_until: String(T0 + 30_001),
    });
    // Both copies' results in one batch: only the holder's is stored, and only its event added.
    const both = await finishAttempts(
      sql,
      'saga-a',
      [
        { ...first, record: record({ event: { ...ev, value: Buffer.from([1]) } }) },
        { ...second, record: record({ event: { ...ev, value: Buffer.from([2]) } }) },
      ],
      T0 + 17_000,
    );
    expect(both.outboxIds).toHaveLength(1);
    const outbox = await sql<{ value: Buffer }[]>`select value from wallet_outbox`;
    expect(outbox.map((o) => [...o.value])).toEqual([[2]]);
    expect((await row(51))?.status).toBe('done');
  });

  it('gives a lease back to be due at once, the attempt not counted', async () => {
    await due([[61, 'win', 'u-6']]);
    const [c] = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    if (!c) throw new Error('lease expected');
    await releaseLease(sql, 'saga-a', c, T0 + 5, T0 + 5);
    const [again] = await sql<{ status: string; attempts: number; leased_by: string | null }[]>`
      select status, attempts, leased_by from wallet_callbacks where tx_id = 61`;
    expect(again).toEqual({ status: 'due', attempts: 0, leased_by: null });
  });
});

describe('pullForward', () => {
  const LATER = T0 + 300_000;
  it("makes the operator's wins, rollbacks and closes waiting for a later retry due now, once each", async () => {
    const waiting = { status: 'due', attempts: 2, nextAttemptAt: LATER, updatedAt: T0 } as const;
    await insertCallbacks(sql, [
      { txId: 201, kind: 'win', operatorId: 'op-1', ...waiting },
      { txId: 203, kind: 'rollback', operatorId: 'op-1', ...waiting, attempts: 1 },
      { txId: 205, kind: 'close', operatorId: 'op-1', ...waiting },
      // Left alone: parked (for ops), leased, never tried, already due, another operator's, pulled before.
      { txId: 207, kind: 'win', operatorId: 'op-1', status: 'parked', attempts: 8, updatedAt: T0 },
      {
        txId: 209,
        kind: 'win',
        operatorId: 'op-1',
        status: 'in_flight',
        attempts: 2,
        nextAttemptAt: LATER,
        leasedBy: 'saga-b',
        leaseUntil: T0 + 15_000,
        updatedAt: T0,
      },
      { txId: 211, kind: 'win', operatorId: 'op-1', ...waiting, attempts: 0 },
      { txId: 213, kind: 'win', operatorId: 'op-1', ...waiting, nextAttemptAt: T0 },
      { txId: 215, kind: 'win', operatorId: 'op-2', ...waiting },
      { txId: 217, kind: 'win', operatorId: 'op-1', ...waiting },
      { txId: 219, kind: 'win', operatorId: 'op-1', status: 'done', attempts: 3, updatedAt: T0 },
    ]);
    await sql`update wallet_callbacks set pulled_forward_at = ${T0 - 60_000} where tx_id = 217`;
    const before =
      await sql`select * from wallet_callbacks where tx_id not in (201, 203, 205) order by tx_id`;

    const at = T0 + 1_000;
    expect((await pullForward(sql, 'op-1', at)).sort()).toEqual([201, 203, 205]);
    const moved = await sql<
      { tx_id: string; status: string; attempts: number; next: string; mark: string }[]
    >`
      select tx_id::text, status, attempts, next_attempt_at::text as next, pulled_forward_at::text as mark
      from wallet_callbacks where tx_id in (201, 203, 205) order by tx_id`;
    expect(moved).toEqual([
      { tx_id: '201', status: 'due', attempts: 2, next: String(at), mark: String(at) },
      { tx_id: '203', status: 'due', attempts: 1, next: String(at), mark: String(at) },
      { tx_id: '205', status: 'due', attempts: 2, next: String(at), mark: String(at) },
    ]);
    expect(
      await sql`select * from wallet_callbacks where tx_id not in (201, 203, 205) order by tx_id`,
    ).toEqual(before);
    // A second recovery (or another instance's) moves nothing again.
    expect(await pullForward(sql, 'op-1', at + 1)).toEqual([]);

    // Leased like any due callback, saying it was pulled forward; the others are not.
    const leased = await leaseCallbacks(sql, 'saga-a', 10, at, 15_000);
    expect(
      leased
        .filter((c) => [201, 203, 205, 213].includes(c.txId))
        .map((c) => [c.txId, c.attempts, c.pulledForward])
        .sort(),
    ).toEqual([
      [201, 3, true],
      [203, 2, true],
      [205, 3, true],
      [213, 3, false],
    ]);
    // Failing again, it waits for a later retry and is not pulled forward a second time.
    await finishAttempts(
      sql,
      'saga-a',
      [{ txId: 201, attempts: 3, record: record({ status: 'due', nextAttemptAt: LATER, answer: 'failed' }) }],
      at + 10,
    );
    expect(await pullForward(sql, 'op-1', at + 20)).toEqual([]);
    // A re-drive starts a fresh schedule, pulling forward allowed again.
    await redriveCallbacks(sql, { txIds: [201] }, at + 30);
    const [redriven] = await sql<{ mark: string | null }[]>`
      select pulled_forward_at::text as mark from wallet_callbacks where tx_id = 201`;
    expect(redriven?.mark).toBeNull();
  });
});
