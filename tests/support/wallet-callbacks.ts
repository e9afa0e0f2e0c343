/**
 * Test support (not a test file): rows of `wallet_callbacks` as the wallet saga leaves them (parked,
 * retrying, due, in flight, done, skipped), written straight into a migrated schema, for the tests
 * of the ops views over them (lib/db/wallet-callbacks.ts, `dead-letters callbacks`, the admin API).
 */
import { randomBytes } from 'node:crypto';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import type { CallbackStatus, CallbackView } from '../../lib/db/wallet-callbacks.ts';
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import { loadConfig } from './config.ts';

/** One row to insert; what is left out gets a plausible value. Times are Unix ms. */
export interface CallbackRow {
  readonly txId: number;
  readonly kind?: CallbackJob['kind'];
  readonly operatorId?: string;
  readonly userId?: string;
  readonly status?: CallbackStatus;
  readonly attempts?: number;
  readonly nextAttemptAt?: number;
  readonly updatedAt?: number;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly lastAnswer?: string | null;
  readonly lastCode?: string | null;
  readonly lastError?: string | null;
  readonly lastRequest?: string | null;
  readonly lastResponse?: string | null;
  /** An in-flight row's holder and lease end. */
  readonly leasedBy?: string | null;
  readonly leaseUntil?: number | null;
}

/** The job the saga stores for `r` (a bet context with the row's operator, player and currency). */
export function callbackJob(r: CallbackRow): CallbackJob {
  const kind = r.kind ?? 'win';
  const betTxId = kind === 'bet' ? r.txId : r.txId - 1;
  return {
    kind,
    txId: r.txId,
    betTxId,
    amountMinor: r.amountMinor ?? 2000,
    bet: {
      session_id: '00000000-0000-4000-8000-000000000001',
      operator_id: r.operatorId ?? 'op-1',
      user_id: r.userId ?? 'u-1',
      currency: r.currency ?? 'EUR',
      game: 'crash',
      round_id: 1_000_000_000_001,
      amount_minor: 1000,
      mode: 'default',
      bonus_code: null,
      free_bet_id: null,
      count_register: 1,
      demo: false,
    },
  };
}

/** What the ops list shows of `r` once inserted (times as insertCallbacks writes them). */
export function viewOf(r: CallbackRow): CallbackView {
  const job = callbackJob(r);
  const at = r.updatedAt ?? Date.now();
  return {
    tx_id: r.txId,
    kind: job.kind,
    bet_tx_id: job.betTxId,
    operator_id: job.bet.operator_id,
    user_id: job.bet.user_id,
    status: r.status ?? 'parked',
    attempts: r.attempts ?? 0,
    next_attempt_at: r.nextAttemptAt ?? at,
    created_at: at - 1000,
    updated_at: at,
    leased_by: r.leasedBy ?? null,
    last_answer: r.lastAnswer ?? null,
    last_code: r.lastCode ?? null,
    last_error: r.lastError ?? null,
    last_request: r.lastRequest ?? null,
    last_response: r.lastResponse ?? null,
    amount_minor: job.amountMinor,
    currency: job.bet.currency,
  };
}

/** A migrated schema of its own holding `rows`; `close` drops it and ends the pool. */
export async function startCallbackSchema(
  prefix: string,
  rows: readonly CallbackRow[],
): Promise<{ schema: string; sql: Sql; close(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const sql = createSql(loadConfig(process.env, { DATABASE_SCHEMA: schema }), { max: 2 });
  await migrate(sql, schema);
  await insertCallbacks(sql, rows);
  return {
    schema,
    sql,
    async close() {
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end({ timeout: 5 });
    },
  };
}

/** Inserts `rows` into `wallet_callbacks` of `sql`'s schema. */
export async function insertCallbacks(sql: Sql, rows: readonly CallbackRow[]): Promise<void> {
  for (const r of rows) {
    const job = callbackJob(r);
    const at = r.updatedAt ?? Date.now();
    await sql`
      insert into wallet_callbacks (tx_id, kind, bet_tx_id, operator_id, user_id, player_key, seq, job, status,
        attempts, next_attempt_at, lease_until, leased_by, created_at, updated_at, last_answer, last_code,
        last_error, last_request, last_response)
      values (${r.txId}, ${job.kind}, ${job.betTxId}, ${job.bet.operator_id}, ${job.bet.user_id},
        ${`${job.bet.operator_id}:${job.bet.user_id}`}, ${r.txId}, ${sql.json(job as never)},
        ${r.status ?? 'parked'}, ${r.attempts ?? 0}, ${r.nextAttemptAt ?? at}, ${r.leaseUntil ?? null},
        ${r.leasedBy ?? null}, ${at - 1000}, ${at}, ${r.lastAnswer ?? null}, ${r.lastCode ?? null},
        ${r.lastError ?? null}, ${r.lastRequest ?? null}, ${r.lastResponse ?? null})`;
  }
}

/** status, attempts and next attempt of `txId` as stored. */
export async function storedCallback(
  sql: Sql,
  txId: number,
): Promise<{ status: string; attempts: number; next_attempt_at: number; updated_at: number } | undefined> {
  const [r] = await sql<{ status: string; attempts: number; next_attempt_at: string; updated_at: string }[]>`
    select status, attempts, next_attempt_at::text, updated_at::text from wallet_callbacks where tx_id = ${txId}`;
  return r && { ...r, next_attempt_at: Number(r.next_attempt_at), updated_at: Number(r.updated_at) };
}

/**
 * A set of rows covering every status for two operators and players, updated at `t0` + n minutes:
 * 101 parked (op-1, u-1), 103 parked (op-1, u-2), 105 retrying (op-2, u-1), 107 due without an
 * attempt (op-1, u-1), 109 in flight (op-1, u-1), 111 done (op-1, u-1), 113 skipped (op-2, u-2),
 * 115 parked rollback (op-2, u-2).
 */
export function callbackSet(t0: number): CallbackRow[] {
  const m = (n: number) => t0 + n * 60_000;
  return [
    {
      txId: 101,
      operatorId: 'op-1',
      userId: 'u-1',
      status: 'parked',
      attempts: 17,
      updatedAt: m(1),
      lastAnswer: 'failed',
      lastCode: '500',
      lastError: 'HTTP 500',
      lastRequest: JSON.stringify({ provider_tx_id: 101, amount: '20.00', currency: 'EUR' }),
      lastResponse: 'HTTP 500 {"error":"down"}',
    },
    { txId: 103, operatorId: 'op-1', userId: 'u-2', status: 'parked', attempts: 17, updatedAt: m(2) },
    {
      txId: 105,
      operatorId: 'op-2',
      userId: 'u-1',
      status: 'due',
      attempts: 3,
      updatedAt: m(3),
      nextAttemptAt: m(30),
    },
    { txId: 107, operatorId: 'op-1', userId: 'u-1', status: 'due', attempts: 0, updatedAt: m(4) },
    {
      txId: 109,
      operatorId: 'op-1',
      userId: 'u-1',
      status: 'in_flight',
      attempts: 2,
      updatedAt: m(5),
      leasedBy: 'saga-a',
      leaseUntil: m(6),
    },
    { txId: 111, operatorId: 'op-1', userId: 'u-1', status: 'done', attempts: 1, updatedAt: m(6) },
    {
      txId: 113,
      kind: 'close',
      operatorId: 'op-2',
      userId: 'u-2',
      status: 'skipped',
      updatedAt: m(7),
    },
    {
      txId: 115,
      kind: 'rollback',
      operatorId: 'op-2',
      userId: 'u-2',
      status: 'parked',
      attempts: 17,
      updatedAt: m(8),
    },
  ];
}
