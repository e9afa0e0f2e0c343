/**
 * The ops queries over wallet_callbacks (lib/db/wallet-callbacks.ts) against real Postgres, in a
 * migrated schema of their own: listing by each filter (status, operator, player, tx ids, time range,
 * limit) newest change first, one callback in full, re-drives of parked and retrying callbacks only
 * (due now, attempts from 0), a dry run that changes nothing, and done, skipped, in-flight and fresh
 * due callbacks never touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callbackSet,
  insertCallbacks,
  startCallbackSchema,
  storedCallback,
  viewOf,
} from '../../tests/support/wallet-callbacks.ts';
import type { Sql } from './pool.ts';
import {
  type CallbackFilter,
  callbackJson,
  getCallback,
  hasSelection,
  listCallbacks,
  redriveCallbacks,
} from './wallet-callbacks.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const min = (n: number) => T0 + n * 60_000;
let db: Awaited<ReturnType<typeof startCallbackSchema>>;
let sql: Sql;

beforeAll(async () => {
  db = await startCallbackSchema('t_wcb', callbackSet(T0));
  sql = db.sql;
});

afterAll(async () => {
  await db?.close();
});

const ids = async (f: CallbackFilter) => (await listCallbacks(sql, f)).map((c) => c.tx_id);

describe('listCallbacks', () => {
  it.each([
    ['default: parked and retrying', {}, [115, 105, 103, 101]],
    ['waiting', { status: 'waiting' }, [115, 105, 103, 101]],
    ['parked', { status: 'parked' }, [115, 103, 101]],
    ['retrying: due with an attempt', { status: 'retrying' }, [105]],
    ['due: retrying and fresh', { status: 'due' }, [107, 105]],
    ['in flight', { status: 'in_flight' }, [109]],
    ['done', { status: 'done' }, [111]],
    ['skipped', { status: 'skipped' }, [113]],
    ['any', { status: 'any' }, [115, 113, 111, 109, 107, 105, 103, 101]],
    ['operator', { operatorId: 'op-1' }, [103, 101]],
    ['player (of any operator)', { userId: 'u-1' }, [105, 101]],
    ['operator and player', { operatorId: 'op-1', userId: 'u-2' }, [103]],
    ['tx id', { txId: 103 }, [103]],
    ['tx ids', { txIds: [101, 105, 111] }, [105, 101]],
    ['tx ids of any status', { status: 'any', txIds: [101, 111] }, [111, 101]],
    ['from (inclusive)', { from: min(3) }, [115, 105]],
    ['to (exclusive)', { to: min(3) }, [103, 101]],
    ['a time range', { status: 'any', from: min(2), to: min(6) }, [109, 107, 105, 103]],
    ['limit, newest first', { status: 'any', limit: 3 }, [115, 113, 111]],
    ['nothing matches', { operatorId: 'op-9' }, []],
  ] as [string, CallbackFilter, number[]][])('%s', async (_what, f, expected) => {
    expect(await ids(f)).toEqual(expected);
  });

  it('shows each row as ops see it', async () => {
    const rows = await listCallbacks(sql, { status: 'any' });
    expect(rows).toEqual(
      callbackSet(T0)
        .map(viewOf)
        .sort((x, y) => y.updated_at - x.updated_at),
    );
    expect(rows.find((c) => c.tx_id === 101)).toMatchObject({
      bet_tx_id: 100,
      next_attempt_at: min(1),
      last_answer: 'failed',
      last_code: '500',
      amount_minor: 2000,
      currency: 'EUR',
    });
  });
});

describe('getCallback', () => {
  it('one callback of any status with its job, player key, sequence and lease', async () => {
    const c = await getCallback(sql, 109);
    expect(c).toMatchObject({
      tx_id: 109,
      status: 'in_flight',
      leased_by: 'saga-a',
      lease_until: min(6),
      player_key: 'op-1:u-1',
      seq: 109,
      job: { kind: 'win', txId: 109, betTxId: 108, amountMinor: 2000, bet: { operator_id: 'op-1' } },
    });
    expect(await getCallback(sql, 999_999)).toBeUndefined();
  });

  it('as JSON: every time ISO 8601, the rest as it is', async () => {
    const c = (await getCallback(sql, 109)) as NonNullable<Awaited<ReturnType<typeof getCallback>>>;
    const j = callbackJson(c);
    expect(j).toMatchObject({
      tx_id: 109,
      next_attempt_at: new Date(min(5)).toISOString(),
      updated_at: new Date(min(5)).toISOString(),
      created_at: new Date(min(5) - 1000).toISOString(),
      lease_until: new Date(min(6)).toISOString(),
      job: c.job,
    });
    const [parked] = await listCallbacks(sql, { txId: 101 });
    expect(callbackJson(parked as NonNullable<typeof parked>)).not.toHaveProperty('lease_until');
    const none = callbackJson({ ...c, lease_until: null });
    expect(none.lease_until).toBeNull();
  });
});

describe('hasSelection', () => {
  it('is true for an operator, player, tx id or time, not for a status alone', () => {
    expect(hasSelection({})).toBe(false);
    expect(hasSelection({ status: 'parked', limit: 5 })).toBe(false);
    expect(hasSelection({ txIds: [] })).toBe(false);
    for (const f of [
      { operatorId: 'o' },
      { userId: 'u' },
      { txId: 1 },
      { txIds: [1] },
      { from: 0 },
      { to: 1 },
    ])
      expect(hasSelection(f)).toBe(true);
  });
});

describe('redriveCallbacks', () => {
  const untouched = [107, 109, 111, 113];
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(
        [101, 103, 105, 115, ...untouched].map(async (id) => [id, await storedCallback(sql, id)]),
      ),
    );

  it('a dry run lists what would be re-driven and changes nothing', async () => {
    const before = await snapshot();
    const r = await redriveCallbacks(sql, { operatorId: 'op-1' }, min(60), true);
    expect(r.map((c) => [c.tx_id, c.status])).toEqual([
      [103, 'parked'],
      [101, 'parked'],
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('never takes done, skipped, in-flight or fresh due callbacks, whatever the filter', async () => {
    const before = await snapshot();
    for (const status of ['done', 'skipped', 'in_flight', 'due', 'any'] as const)
      expect(await redriveCallbacks(sql, { status, txIds: untouched }, min(60))).toEqual([]);
    expect(await redriveCallbacks(sql, { txIds: untouched }, min(60))).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('re-drives by tx id: due now, attempts from 0, the others unchanged', async () => {
    const before = await snapshot();
    const r = await redriveCallbacks(sql, { txIds: [103, 111] }, min(60));
    expect(r.map((c) => [c.tx_id, c.status, c.attempts])).toEqual([[103, 'parked', 17]]);
    expect(await storedCallback(sql, 103)).toEqual({
      status: 'due',
      attempts: 0,
      next_attempt_at: min(60),
      updated_at: min(60),
    });
    const after = await snapshot();
    for (const id of [101, 105, 115, ...untouched]) expect(after[id]).toEqual(before[id]);
    // Due without an attempt now: neither parked nor retrying, so not re-driven again.
    expect(await redriveCallbacks(sql, { txId: 103 }, min(61))).toEqual([]);
  });

  it('re-drives retrying callbacks of a player with status retrying, parked ones with parked', async () => {
    expect(
      (await redriveCallbacks(sql, { status: 'parked', userId: 'u-1' }, min(62))).map((c) => c.tx_id),
    ).toEqual([101]);
    expect(
      (await redriveCallbacks(sql, { status: 'retrying', userId: 'u-1' }, min(62))).map((c) => c.tx_id),
    ).toEqual([105]);
    expect(await storedCallback(sql, 105)).toMatchObject({
      status: 'due',
      attempts: 0,
      next_attempt_at: min(62),
    });
  });

  it('re-drives by time range and honours the limit', async () => {
    await insertCallbacks(sql, [
      { txId: 201, status: 'parked', attempts: 17, updatedAt: min(100) },
      { txId: 203, status: 'parked', attempts: 17, updatedAt: min(101) },
      { txId: 205, status: 'parked', attempts: 17, updatedAt: min(102) },
    ]);
    const first = await redriveCallbacks(sql, { from: min(100), to: min(103), limit: 2 }, min(110));
    expect(first.map((c) => c.tx_id)).toEqual([205, 203]);
    const rest = await redriveCallbacks(sql, { from: min(100), to: min(103) }, min(111));
    expect(rest.map((c) => c.tx_id)).toEqual([201]);
    // 115 (parked at minute 8) was outside the range throughout.
    expect(await storedCallback(sql, 115)).toMatchObject({ status: 'parked', attempts: 17 });
  });
});
