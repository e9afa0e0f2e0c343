/**
 * What the saga reads from Postgres to make a callback: the operator's configuration (table
 * `operators`, lib/db/migrations/003_wallet.sql) and the session's token and extra_data
 * (`access_sessions`). Operator rows are cached for `cacheMs` so a change by an admin applies
 * within that time; sessions never change the fields read here, so they are cached until evicted
 * (at most `maxSessions`, oldest first).
 */
import type { Sql } from '../../lib/db/pool.ts';
import type { AmountFormat } from '../../rules/money/currencies.ts';
import { parseRetryPolicy } from '../../rules/retry/schedule.ts';
import { answerTable } from '../../rules/wallet/answers.ts';
import type { OperatorConfig, RoundClose, SessionInfo } from '../../rules/wallet/bodies.ts';

/** An operator's callback configuration plus what the breaker's balance probe needs. */
export interface SagaOperator extends OperatorConfig {
  readonly balancePath: string;
}

export interface Directory {
  /** The operator's callback configuration, or null when unknown or disabled. @throws on a database error. */
  operator(operatorId: string, nowMs: number): Promise<SagaOperator | null>;
  /** The session's token and extra_data, or null when unknown. @throws on a database error. */
  session(sessionId: string): Promise<SessionInfo | null>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface OperatorRow {
  operator_id: string;
  callback_form: 'A' | 'B';
  base_url: string;
  bet_path: string;
  win_path: string;
  rollback_path: string;
  balance_path: string;
  signing_secret: string;
  timeout_ms: number;
  retry_policy: unknown;
  answer_table: unknown;
  round_close: RoundClose;
  round_end_path: string | null;
  amount_format: AmountFormat;
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/**
 * Maps a row to the configuration.
 * @throws RetryPolicyError or AnswerTableError for an unusable retry_policy or answer_table.
 */
function operatorFromRow(row: OperatorRow): SagaOperator {
  return {
    operatorId: row.operator_id,
    form: row.callback_form,
    baseUrl: row.base_url.replace(/\/+$/, ''),
    betPath: row.bet_path,
    winPath: row.win_path,
    rollbackPath: row.rollback_path,
    balancePath: row.balance_path,
    signingSecret: row.signing_secret,
    timeoutMs: Number(row.timeout_ms),
    retrySchedule: parseRetryPolicy(json(row.retry_policy)),
    // postgres.js hands jsonb over parsed: a preset arrives as its name.
    answers: answerTable(row.answer_table),
    roundClose: row.round_close,
    roundEndPath: row.round_end_path,
    amountFormat: row.amount_format,
  };
}

/** A directory over `sql` (search_path = the configured schema). */
export function createDirectory(sql: Sql, cacheMs: number, maxSessions = 50_000): Directory {
  const operators = new Map<string, { at: number; value: SagaOperator | null }>();
  const sessions = new Map<string, SessionInfo>();
  return {
    async operator(operatorId, nowMs) {
      const hit = operators.get(operatorId);
      if (hit && nowMs - hit.at < cacheMs) return hit.value;
      const rows = await sql<OperatorRow[]>`
        select operator_id, callback_form, base_url, bet_path, win_path, rollback_path, balance_path,
               signing_secret, timeout_ms, retry_policy, answer_table, round_close, round_end_path, amount_format
        from operators where operator_id = ${operatorId} and disabled_at is null`;
      const value = rows[0] ? operatorFromRow(rows[0]) : null;
      operators.set(operatorId, { at: nowMs, value });
      return value;
    },
    async session(sessionId) {
      const hit = sessions.get(sessionId);
      if (hit) return hit;
      if (!UUID.test(sessionId)) return null;
      const rows = await sql<{ session_token: string; extra_data: string | null }[]>`
        select session_token, extra_data from access_sessions where session_id = ${sessionId}`;
      const row = rows[0];
      if (!row) return null;
      const info = { sessionToken: row.session_token, extraData: row.extra_data };
      if (sessions.size >= maxSessions) sessions.delete(sessions.keys().next().value as string);
      sessions.set(sessionId, info);
      return info;
    },
  };
}
