/**
 * Every callback attempt recorded (wallet_callback_attempts, migration 016) against real Postgres,
 * in a migrated schema of its own: store.ts `finishAttempts` records each
 * stored result's attempt in the same statement, fenced by the same lease (a result whose lease was
 * taken over records nothing), numbers attempts over the callback's whole life (a re-drive does not
 * restart them), records nothing for a skipped close, and stores a body with U+0000 rather than
 * failing the result; lib/db/wallet-callbacks.ts `listAttempts` reads them in the portal's shape (only the
 * operator's own), and `callbackStats` sums them per minute with Postgres percentiles.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../lib/db/pool.ts';
import {
  callbackStats,
  listAttempts,
  readAttempts,
  redriveCallbacks,
} from '../../lib/db/wallet-callbacks.ts';
import { insertCallbacks, startCallbackSchema } from '../../tests/support/wallet-callbacks.ts';
import { type AttemptRecord, finishAttempts, leaseCallbacks, type SentAttempt, SKIPPED } from './store.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
let db: Awaited<ReturnType<typeof startCallbackSchema>>;
let sql: Sql;

beforeAll(async () => {
  db = await startCallbackSchema('t_wattempts', []);
  sql = db.sql;
});

afterAll(async () => {
  await db?.close();
});

afterEach(async () => {
  await sql`delete from wallet_callbacks`;
  await sql`delete from wallet_callback_attempts`;
  await sql`delete from wallet_outbox`;
});

const HEADERS = {
  'content-type': 'application/json',
  'webhook-id': 'tx-1',
  'webhook-timestamp': '1767268800',
  'webhook-signature': 'v1,abc= v1,def=',
};

const sentAt = (over: Partial<SentAttempt>): SentAttempt => ({
  operatorId: 'op-1',
  at: T0,
  method: 'POST',
  url: 'http://op.test/wallet/win',
  headers: HEADERS,
  body: '{"action":"win"}',
  status: 200,
  responseBody: '{"ok":true}',
  latencyMs: 12.4,
  class: 'ok',
  code: null,
  error: null,
  ...over,
});

const record = (over: Partial<AttemptRecord>): AttemptRecord => ({
  status: 'done',
  nextAttemptAt: null,
  answer: 'ok',
  code: null,
  error: null,
  request: '{}',
  response: 'HTTP 200 {}',
  event: null,
  sent: sentAt({}),
  ...over,
});

/** Leases every due callback for `owner` at `at` and stores `r` for each as one batch. */
async function attemptAll(owner: string, at: number, r: (txId: number) => AttemptRecord) {
  const leased = await leaseCallbacks(sql, owner, 10, at, 15_000);
  return finishAttempts(
    sql,
    owner,
    leased.map((c) => ({ txId: c.txId, attempts: c.attempts, record: r(c.txId) })),
    at + 5,
  );
}

describe('finishAttempts records every attempt', () => {
  it('records a failed, failed, succeeded callback as attempts 1..3 with what was sent and answered', async () => {
    await insertCallbacks(sql, [{ txId: 2, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 }]);
    const fail = (n: number) =>
      record({
        status: 'due',
        nextAttemptAt: T0 + n * 60_000,
        answer: 'failed',
        sent: sentAt({
          at: T0 + (n - 1) * 60_000,
          status: 503,
          responseBody: 'down',
          class: 'failed',
          code: 'OPERATOR_ERROR',
          error: 'HTTP 503',
        }),
      });
    await attemptAll('saga-a', T0, () => fail(1));
    await attemptAll('saga-a', T0 + 60_000, () => fail(2));
    await attemptAll('saga-a', T0 + 120_000, () => record({ sent: sentAt({ at: T0 + 120_000 }) }));

    const attempts = await listAttempts(sql, 2);
    expect(attempts.map((a) => [a.attempt, a.response.status, a.class, a.next_attempt_at])).toEqual([
      [1, 503, 'failed', new Date(T0 + 60_000).toISOString()],
      [2, 503, 'failed', new Date(T0 + 120_000).toISOString()],
      [3, 200, 'ok', null],
    ]);
    expect(attempts[0]).toEqual({
      attempt: 1,
      at: new Date(T0).toISOString(),
      request: {
        method: 'POST',
        url: 'http://op.test/wallet/win',
        headers: HEADERS,
        body: '{"action":"win"}',
      },
      response: { status: 503, body: 'down' },
      latency_ms: 12,
      class: 'failed',
      code: 'OPERATOR_ERROR',
      error: 'HTTP 503',
      next_attempt_at: new Date(T0 + 60_000).toISOString(),
    });
  });

  it('records nothing for a result whose lease was taken over, nor for a skipped close', async () => {
    await insertCallbacks(sql, [
      { txId: 4, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 },
      { txId: 6, kind: 'close', status: 'due', nextAttemptAt: T0, updatedAt: T0 },
    ]);
    const leased = await leaseCallbacks(sql, 'saga-a', 10, T0, 15_000);
    await sql`update wallet_callbacks set leased_by = 'saga-b' where tx_id = 4`;
    const r = await finishAttempts(
      sql,
      'saga-a',
      leased.map((c) => ({
        txId: c.txId,
        attempts: c.attempts,
        record: c.txId === 6 ? SKIPPED : record({}),
      })),
      T0 + 5,
    );
    expect([...r.held]).toEqual([6]);
    expect(await sql`select tx_id from wallet_callback_attempts`).toEqual([]);
  });

  it('goes on numbering after a re-drive', async () => {
    await insertCallbacks(sql, [{ txId: 8, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 }]);
    await attemptAll('saga-a', T0, () => record({ status: 'parked', answer: 'failed' }));
    expect(await redriveCallbacks(sql, { txId: 8 }, T0 + 1000)).toHaveLength(1);
    await attemptAll('saga-a', T0 + 1000, () => record({}));
    const attempts = await listAttempts(sql, 8);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('reads at most `limit` attempts (100 by default), the newest, oldest first, with the total', async () => {
    await insertCallbacks(sql, [
      { txId: 16, kind: 'win', status: 'parked', nextAttemptAt: T0, updatedAt: T0 },
    ]);
    await sql`insert into wallet_callback_attempts (tx_id, attempt, operator_id, at, latency_ms, class)
      select 16, n, 'op-1', ${T0}::bigint + n, 0, 'failed' from generate_series(1, 105) as n`;
    const all = await listAttempts(sql, 16);
    expect([all.length, all[0]?.attempt, all.at(-1)?.attempt]).toEqual([100, 6, 105]);
    const page = await readAttempts(sql, 16, 'op-1', 3);
    expect([page.attempts.map((a) => a.attempt), page.total]).toEqual([[103, 104, 105], 105]);
    expect(await readAttempts(sql, 16, 'op-2')).toEqual({ attempts: [], total: 0 });
    for (const bad of [0, 1001, 2.5])
      await expect(listAttempts(sql, 16, undefined, bad)).rejects.toThrow(RangeError);
  });

  it("reads only the operator's own attempts when asked", async () => {
    await insertCallbacks(sql, [{ txId: 10, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 }]);
    await attemptAll('saga-a', T0, () => record({}));
    expect(await listAttempts(sql, 10, 'op-1')).toHaveLength(1);
    expect(await listAttempts(sql, 10, 'op-2')).toEqual([]);
  });
});

describe('finishAttempts with U+0000 in an answer', () => {
  it('stores an answer holding U+0000 in both tables, and the rest of its batch with it', async () => {
    await insertCallbacks(sql, [
      { txId: 12, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 },
      { txId: 14, kind: 'win', status: 'due', nextAttemptAt: T0, updatedAt: T0 },
    ]);
    // Built as Sender.resultOf builds it (send.ts): the answer's excerpt and the reason and code
    // read from its body go to wallet_callbacks, the body itself to the attempt row.
    const nul = record({
      status: 'due',
      nextAttemptAt: T0 + 60_000,
      answer: 'failed',
      code: 'E\u0000',
      error: 'bad \u0000 reason',
      request: '{"a":"\u0000"}',
      response: 'HTTP 200 a\u0000b',
      sent: sentAt({
        url: 'http://op.test/w\u0000',
        responseBody: 'a\u0000b',
        class: 'failed',
        code: 'E\u0000',
        error: 'bad \u0000 reason',
      }),
    });
    const r = await attemptAll('saga-a', T0, (tx) => (tx === 12 ? nul : record({})));
    expect([...r.held].sort()).toEqual([12, 14]);
    expect(
      await sql`select tx_id::int, status, last_code, last_error, last_request, last_response
        from wallet_callbacks order by tx_id`,
    ).toEqual([
      {
        tx_id: 12,
        status: 'due',
        last_code: 'E\uFFFD',
        last_error: 'bad \uFFFD reason',
        last_request: '{"a":"\uFFFD"}',
        last_response: 'HTTP 200 a\uFFFDb',
      },
      {
        tx_id: 14,
        status: 'done',
        last_code: null,
        last_error: null,
        last_request: '{}',
        last_response: 'HTTP 200 {}',
      },
    ]);
    const [a] = await listAttempts(sql, 12);
    expect([a?.request.url, a?.response.body, a?.code, a?.error]).toEqual([
      'http://op.test/w\uFFFD',
      'a\uFFFDb',
      'E\uFFFD',
      'bad \uFFFD reason',
    ]);
    expect(await listAttempts(sql, 14)).toHaveLength(1);
  });
});

describe('callbackStats', () => {
  it('times only attempts that left, and counts a rollback or close the operator does not know as succeeded', async () => {
    await insertCallbacks(sql, [
      { txId: 21, kind: 'rollback', status: 'done' },
      { txId: 23, kind: 'win', status: 'parked' },
    ]);
    // As the saga records them (send.ts): [tx, url, status, class, code, error, latency ms].
    const rows: [number, string | null, number | null, string, string | null, string | null, number][] = [
      [21, 'http://op.test/rollback', 200, 'unknown_transaction', 'UNKNOWN_TRANSACTION', 'no such tx', 10],
      [23, 'http://op.test/win', 200, 'unknown_transaction', 'UNKNOWN_TRANSACTION', 'no such tx', 20],
      [25, 'http://op.test/win', null, 'failed', 'OPERATOR_ERROR', 'cannot sign: bad secret', 0],
      [27, null, null, 'refused', 'OPERATOR_UNKNOWN', 'unknown or disabled operator op-1', 0],
      [29, 'http://op.test/win', 200, 'ok', null, null, 100],
      [31, 'http://op.test/win', null, 'failed', 'TIMEOUT', 'no answer within 1000 ms', 1000],
      [33, 'http://op.test/win', null, 'failed', 'OPERATOR_ERROR', 'connection error: ECONNREFUSED', 30],
    ];
    for (const [tx, url, status, cls, code, error, ms] of rows)
      await sql`insert into wallet_callback_attempts (tx_id, attempt, operator_id, at, request_url, response_status,
                  latency_ms, class, code, error)
                values (${tx}, 1, 'op-1', ${T0 + 1_000}, ${url}, ${status}, ${ms}, ${cls}, ${code}, ${error})`;
    const s = await callbackStats(sql, 'op-1', T0, T0 + 60_000);
    // Sent: 10, 20, 30, 100, 1000 ms (the attempt never signed nor the one never sent, both 0 ms, are not).
    expect(s.last_hour).toEqual({
      total: 7,
      succeeded: 2,
      failed: 5,
      success_rate: 2 / 7,
      latency_ms: { p50: 30, p99: expect.closeTo(964, 0) },
    });
    expect(s.per_minute).toEqual([{ minute: new Date(T0).toISOString(), total: 7, succeeded: 2, failed: 5 }]);
  });

  it('counts attempts per minute with zeros, the success rate, p50/p99 and retrying/parked now', async () => {
    const rows: [number, number, string, number, string][] = [
      // tx, at, class, latency, operator
      [1, T0 + 1_000, 'ok', 10, 'op-1'],
      [1, T0 + 2_000, 'failed', 30, 'op-1'],
      [3, T0 + 2 * 60_000 + 5, 'duplicate', 20, 'op-1'],
      [5, T0 + 2 * 60_000 + 9, 'failed', 40, 'op-1'],
      [7, T0 + 1_000, 'ok', 1000, 'op-2'],
      [9, T0 - 1, 'ok', 1000, 'op-1'],
    ];
    for (const [i, [tx, at, cls, ms, op]] of rows.entries())
      await sql`insert into wallet_callback_attempts (tx_id, attempt, operator_id, at, request_url, response_status,
                  latency_ms, class)
                values (${tx}, ${i + 1}, ${op}, ${at}, 'http://op.test/x', 200, ${ms}, ${cls})`;
    await insertCallbacks(sql, [
      { txId: 11, status: 'due', attempts: 2 },
      { txId: 13, status: 'due', attempts: 0 },
      { txId: 15, status: 'parked', attempts: 5 },
      { txId: 17, status: 'parked', attempts: 5, operatorId: 'op-2' },
    ]);

    const s = await callbackStats(sql, 'op-1', T0, T0 + 3 * 60_000);
    expect(s.per_minute).toEqual([
      { minute: new Date(T0).toISOString(), total: 2, succeeded: 1, failed: 1 },
      { minute: new Date(T0 + 60_000).toISOString(), total: 0, succeeded: 0, failed: 0 },
      { minute: new Date(T0 + 120_000).toISOString(), total: 2, succeeded: 1, failed: 1 },
    ]);
    expect(s.last_hour).toEqual({
      total: 4,
      succeeded: 2,
      failed: 2,
      success_rate: 0.5,
      latency_ms: { p50: 25, p99: expect.closeTo(39.7, 5) },
    });
    expect([s.retrying, s.parked]).toEqual([1, 1]);

    const none = await callbackStats(sql, 'op-9', T0, T0 + 60_000);
    expect(none.last_hour).toEqual({
      total: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      latency_ms: { p50: null, p99: null },
    });
    await expect(callbackStats(sql, 'op-1', T0, T0)).rejects.toThrow(RangeError);
  });
});
