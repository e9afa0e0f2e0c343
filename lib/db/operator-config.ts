/**
 * An operator's callback configuration as stored in `operators` (lib/db/migrations 003, 008, 010, 017):
 * the row's columns read into rules/wallet/bodies.ts's OperatorConfig, with the retry policy
 * (rules/retry/schedule.ts) and answer table (rules/wallet/answers.ts) parsed by their own rules.
 * For every reader of an operator's callbacks outside the saga (the wallet conformance kit).
 */

import type { AmountFormat } from '../../rules/money/currencies.ts';
import { parseRetryPolicy } from '../../rules/retry/schedule.ts';
import { answerTable } from '../../rules/wallet/answers.ts';
import type { OperatorConfig, RoundClose } from '../../rules/wallet/bodies.ts';
import type { Readiness } from '../../rules/wallet/readiness.ts';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import { newSigningSecret } from '../auth/secrets.ts';
import { RotationInProgressError } from '../errors.ts';
import type { Sql } from './pool.ts';

/** The callback configuration plus the balance callback's path (not part of a money callback). */
export interface OperatorCallbackConfig extends OperatorConfig {
  readonly balancePath: string;
}

/** The columns of `operators` the configuration is made of. */
export interface OperatorConfigRow {
  readonly operator_id: string;
  readonly callback_form: 'A' | 'B';
  readonly base_url: string;
  readonly bet_path: string;
  readonly win_path: string;
  readonly rollback_path: string;
  readonly balance_path: string;
  readonly signing_secret: string;
  /**
   * Migration 017: the secret a rotation replaced and until when it still signs (null when none).
   * Required: a row read without them would sign with the new secret alone during an overlap.
   */
  readonly previous_signing_secret: string | null;
  readonly previous_secret_valid_until: Date | null;
  readonly timeout_ms: number;
  readonly retry_policy: unknown;
  readonly answer_table: unknown;
  readonly round_close: RoundClose;
  readonly round_end_path: string | null;
  readonly amount_format: AmountFormat;
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/**
 * The configuration of one `operators` row. The base URL loses its trailing slashes (bodies.ts
 * joins paths to it).
 * @throws RetryPolicyError or AnswerTableError for an unusable retry_policy or answer_table.
 */
export function operatorConfigFromRow(row: OperatorConfigRow): OperatorCallbackConfig {
  return {
    operatorId: row.operator_id,
    form: row.callback_form,
    baseUrl: row.base_url.replace(/\/+$/, ''),
    betPath: row.bet_path,
    winPath: row.win_path,
    rollbackPath: row.rollback_path,
    balancePath: row.balance_path,
    signingSecret: row.signing_secret,
    previousSigningSecret: row.previous_signing_secret ?? null,
    previousSecretValidUntil: row.previous_secret_valid_until?.getTime() ?? null,
    timeoutMs: Number(row.timeout_ms),
    retrySchedule: parseRetryPolicy(json(row.retry_policy)),
    // postgres.js hands jsonb over parsed: a preset arrives as its name.
    answers: answerTable(row.answer_table),
    roundClose: row.round_close,
    roundEndPath: row.round_end_path,
    amountFormat: row.amount_format,
  };
}

/**
 * The configuration of the enabled operator `operatorId`, or null when there is none (unknown or
 * disabled).
 * @throws RetryPolicyError, AnswerTableError for an unusable row; postgres errors.
 */
export async function readOperatorConfig(
  sql: Sql,
  operatorId: string,
): Promise<OperatorCallbackConfig | null> {
  const rows = await sql<OperatorConfigRow[]>`
    select operator_id, callback_form, base_url, bet_path, win_path, rollback_path, balance_path,
           signing_secret, previous_signing_secret, previous_secret_valid_until, timeout_ms, retry_policy,
           answer_table, round_close, round_end_path, amount_format
    from operators where operator_id = ${operatorId} and disabled_at is null`;
  return rows[0] ? operatorConfigFromRow(rows[0]) : null;
}

/**
 * Stores the result of operator `operatorId`'s readiness probe (migration 012).
 * @throws the postgres.js error.
 */
export async function storeReadiness(sql: Sql, operatorId: string, r: Readiness): Promise<void> {
  await sql`
    update operators set readiness = ${sql.json(r as never)}, ready = ${r.ready},
      readiness_checked_at = ${new Date(r.checkedAt)}
    where operator_id = ${operatorId}`;
}

/**
 * The secrets that sign a request to the operator of `row` (a row of `operators`) at `nowMs`
 * (wall-clock Unix ms): the current one, and the one a rotation replaced while it is still valid
 * (rules/wallet/signing.ts). For callers that hold a raw row rather than the configuration.
 */
export function rowSigningSecrets(
  row: Pick<OperatorConfigRow, 'signing_secret' | 'previous_signing_secret' | 'previous_secret_valid_until'>,
  nowMs: number,
): string[] {
  return signingSecretsAt(
    {
      signingSecret: row.signing_secret,
      previousSigningSecret: row.previous_signing_secret,
      previousSecretValidUntil: row.previous_secret_valid_until?.getTime() ?? null,
    },
    nowMs,
  );
}

/** What a rotation gives: the new secret (shown once) and the end of the old one's overlap. */
export interface RotatedSecret {
  /** The new `whsec_…` secret; stored, never logged. */
  readonly signingSecret: string;
  /** Until when the replaced secret still signs, Unix ms (`now + overlapS * 1000`). */
  readonly previousValidUntil: number;
}

/**
 * Rotates operator `operatorId`'s signing secret in one statement: a new secret
 * (lib/auth/secrets.ts `newSigningSecret`) becomes current, and the current one becomes the
 * previous one, still signing until `now + overlapS` s (migration 017). While the secret an
 * earlier rotation replaced still signs (its overlap not over at `now`), the rotation is refused:
 * the condition is in the UPDATE itself, so of two rotations at once exactly one happens (the
 * second re-reads the row the first wrote). With `force`, that older secret is dropped at once:
 * at most two secrets sign at once. A lapsed previous secret is always replaced by the rotation
 * (never kept). The wallet saga picks the rotation up within its operator cache's lifetime (at most
 * `SIGNING_CACHE_MAX_MS`, services/wallet-saga/config.ts); until then it signs with the old
 * secret alone, which stays valid, so the overlap must be longer than that (the portal's floor
 * of 60 s is).
 * @param overlapS seconds the old secret keeps signing (a positive integer; callers validate the range).
 * @param now Unix ms (wall clock).
 * @param options.force rotate even during a previous rotation's overlap, dropping the secret it replaced.
 * @returns the new secret and the overlap's end, or null when the operator is unknown or disabled
 *   (nothing changed).
 * @throws RangeError when `overlapS` is not a positive integer; RotationInProgressError when a
 *   previous secret is still valid at `now` and `force` is not set (nothing changed); the
 *   postgres.js error.
 */
export async function rotateSigningSecret(
  sql: Sql,
  operatorId: string,
  overlapS: number,
  now: number,
  options: { readonly force?: boolean } = {},
): Promise<RotatedSecret | null> {
  if (!Number.isInteger(overlapS) || overlapS <= 0)
    throw new RangeError(`overlap_s must be a positive integer of seconds, got ${overlapS}`);
  const secret = newSigningSecret();
  const until = now + overlapS * 1000;
  const rows = await sql`
    update operators set previous_signing_secret = signing_secret,
      previous_secret_valid_until = ${new Date(until)}, signing_secret = ${secret}
    where operator_id = ${operatorId} and disabled_at is null
      and (${options.force === true} or previous_secret_valid_until is null
           or previous_secret_valid_until <= ${new Date(now)})
    returning 1`;
  if (rows.length > 0) return { signingSecret: secret, previousValidUntil: until };
  const [held] = await sql<{ until: Date | null }[]>`
    select previous_secret_valid_until as until from operators
    where operator_id = ${operatorId} and disabled_at is null`;
  if (!held) return null;
  // Refused by the overlap (read again: the row another rotation wrote, when that was the cause).
  throw new RotationInProgressError(held.until?.getTime() ?? now);
}
