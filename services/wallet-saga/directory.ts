/**
 * What the saga reads from Postgres to make a callback: the operator's configuration (table
 * `operators`, lib/db/migrations/003_wallet.sql) and the session's token and extra_data
 * (`access_sessions`). Operator rows are cached for `cacheMs` so a change by an admin applies
 * within that time; sessions never change the fields read here, so they are cached until evicted
 * (at most `maxSessions`, oldest first).
 */
import { type OperatorCallbackConfig, readOperatorConfig } from '../../lib/db/operator-config.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { SessionInfo } from '../../rules/wallet/bodies.ts';

/** An operator's callback configuration plus what the breaker's balance probe needs. */
export type SagaOperator = OperatorCallbackConfig;

export interface Directory {
  /** The operator's callback configuration, or null when unknown or disabled. @throws on a database error. */
  operator(operatorId: string, nowMs: number): Promise<SagaOperator | null>;
  /** The session's token and extra_data, or null when unknown. @throws on a database error. */
  session(sessionId: string): Promise<SessionInfo | null>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A directory over `sql` (search_path = the configured schema). */
export function createDirectory(sql: Sql, cacheMs: number, maxSessions = 50_000): Directory {
  const operators = new Map<string, { at: number; value: SagaOperator | null }>();
  const sessions = new Map<string, SessionInfo>();
  return {
    async operator(operatorId, nowMs) {
      const hit = operators.get(operatorId);
      if (hit && nowMs - hit.at < cacheMs) return hit.value;
      const value = await readOperatorConfig(sql, operatorId);
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
