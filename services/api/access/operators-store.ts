/**
 * Postgres side of the operators registry (migration 003 `operators`), for the admin routes of
 * operators.ts. Each function is one statement outside any transaction, so what it writes is all
 * or nothing; a disabled operator (`disabled_at` set) is gone for all of them but the insert.
 */
import type { Sql } from '../../../lib/db/pool.ts';
import type { OperatorRow } from './guards.ts';
import type { CreateOperatorBody } from './input.ts';

/** An operator's base URL as stored: without trailing slashes (callbacks append their paths). */
const baseUrlOf = (url: string): string => url.replace(/\/+$/, '');

/**
 * Inserts a new operator under `operatorId`, storing the SHA-256 `tokenHash` of its bearer token
 * and its `signingSecret`; `retry_policy` and `answer_table` as JSON.
 * @returns the stored row.
 * @throws postgres errors (e.g. a unique violation of operator_id).
 */
export async function insertOperator(
  sql: Sql,
  operatorId: string,
  b: CreateOperatorBody,
  tokenHash: string,
  signingSecret: string,
): Promise<OperatorRow> {
  const [o] = await sql<OperatorRow[]>`
    insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
                           balance_path, rollback_path, signing_secret, timeout_ms, retry_policy,
                           answer_table, round_close, round_end_path, amount_format)
    values (${operatorId}, ${b.name}, ${tokenHash}, ${b.callback_form},
            ${baseUrlOf(b.base_url)}, ${b.bet_path}, ${b.win_path}, ${b.balance_path},
            ${b.rollback_path}, ${signingSecret}, ${b.timeout_ms}, ${sql.json(b.retry_policy)},
            ${sql.json(b.answer_table)}, ${b.round_close}, ${b.round_end_path ?? null}, ${b.amount_format})
    returning *`;
  return o as OperatorRow;
}

/** Reads the operator `id` unless it is disabled; undefined when there is none. */
export async function activeOperator(sql: Sql, id: string): Promise<OperatorRow | undefined> {
  const [o] = await sql<OperatorRow[]>`
    select * from operators where operator_id = ${id} and disabled_at is null`;
  return o;
}

/** Every operator not disabled, oldest first (then by id). */
export async function activeOperators(sql: Sql): Promise<OperatorRow[]> {
  return await sql<OperatorRow[]>`
    select * from operators where disabled_at is null order by created_at, operator_id`;
}

/** The settings PATCH may change, all given (the route merges the body over the current row). */
export type OperatorSettings = Pick<
  OperatorRow,
  | 'name'
  | 'callback_form'
  | 'base_url'
  | 'bet_path'
  | 'win_path'
  | 'balance_path'
  | 'rollback_path'
  | 'timeout_ms'
  | 'retry_policy'
  | 'answer_table'
  | 'round_close'
  | 'round_end_path'
  | 'amount_format'
>;

/** Overwrites the settings of operator `id` (its token, secret and readiness stay). */
export async function updateOperator(sql: Sql, id: string, s: OperatorSettings): Promise<void> {
  await sql`
    update operators set
      name = ${s.name}, callback_form = ${s.callback_form},
      base_url = ${baseUrlOf(s.base_url)},
      bet_path = ${s.bet_path}, win_path = ${s.win_path},
      balance_path = ${s.balance_path}, rollback_path = ${s.rollback_path},
      timeout_ms = ${s.timeout_ms},
      retry_policy = ${sql.json(s.retry_policy as never)},
      answer_table = ${sql.json(s.answer_table as never)},
      round_close = ${s.round_close}, round_end_path = ${s.round_end_path},
      amount_format = ${s.amount_format}
    where operator_id = ${id}`;
}

/**
 * Disables operator `id` at the database's `now()` (its token stops working; the row stays for
 * the sessions and transactions that reference it).
 * @returns the row as disabled, or undefined when it did not exist or was already disabled.
 */
export async function disableOperator(sql: Sql, id: string): Promise<OperatorRow | undefined> {
  const [o] = await sql<OperatorRow[]>`
    update operators set disabled_at = now()
    where operator_id = ${id} and disabled_at is null returning *`;
  return o;
}
