/**
 * Operator readiness on the session API: the readiness probe
 * (lib/http/operator-probe.ts) run when an operator is registered or changed and kept in its row
 * (migration 012), and the gate request-access passes before it grants a real-money session: the
 * operator's circuit breaker must be closed (else 503 OPERATOR_UNAVAILABLE, Retry-After to its
 * next probe) and its last readiness probe passed (else it is probed again, at most every
 * REPROBE_MS, and while it still fails: 503 OPERATOR_NOT_READY with Retry-After). Demo sessions
 * call no operator and pass.
 */
import type { BreakerReader } from '../../../lib/db/operator-breakers.ts';
import { readOperatorConfig, storeReadiness } from '../../../lib/db/operator-config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { CallbackClient } from '../../../lib/http/callback-client.ts';
import { probeOperator } from '../../../lib/http/operator-probe.ts';
import { refusesBets } from '../../../rules/wallet/breaker.ts';
import type { Readiness } from '../../../rules/wallet/readiness.ts';
import { OperatorUnavailableError } from '../errors.ts';

/** A failed probe is repeated by request-access at most this often, ms (and its Retry-After). */
export const REPROBE_MS = 5_000;

/** What the admin API shows of an operator's readiness. */
export interface ReadinessView {
  readonly ready: boolean;
  readonly checked_at: string;
  readonly checks: readonly { name: string; method: string; path: string; ok: boolean; detail: string }[];
}

/** The stored readiness as the admin API shows it, or null before the first probe. */
export function readinessView(stored: unknown): ReadinessView | null {
  const r = (typeof stored === 'string' ? JSON.parse(stored) : stored) as Readiness | null;
  if (!r) return null;
  return {
    ready: r.ready,
    checked_at: new Date(r.checkedAt).toISOString(),
    checks: r.checks.map((c) => ({
      name: c.name,
      method: c.method,
      path: c.path,
      ok: c.ok,
      detail: c.detail,
    })),
  };
}

/**
 * Probes operator `operatorId` now and stores the result.
 * @returns the readiness, or null when the operator is unknown or disabled.
 * @throws the postgres.js error; RetryPolicyError or AnswerTableError for an unusable row.
 */
export async function probeAndStore(
  sql: Sql,
  client: CallbackClient,
  operatorId: string,
  nowMs: number,
): Promise<Readiness | null> {
  const op = await readOperatorConfig(sql, operatorId);
  if (!op) return null;
  const r = await probeOperator(op, client, nowMs);
  await storeReadiness(sql, operatorId, r);
  return r;
}

export interface ReadinessGate {
  /**
   * Passes when `operatorId` may be given a real-money session now.
   * @throws OperatorUnavailableError OPERATOR_UNAVAILABLE (breaker open) or OPERATOR_NOT_READY.
   */
  check(operatorId: string, nowMs: number): Promise<void>;
}

/** The gate over `sql`; one probe at a time per operator in this process. */
export function createReadinessGate(
  sql: Sql,
  client: CallbackClient,
  breakers: BreakerReader,
): ReadinessGate {
  const inFlight = new Map<string, Promise<Readiness | null>>();
  return {
    async check(operatorId, nowMs) {
      const refusal = refusesBets(await breakers.state(operatorId, nowMs), nowMs);
      if (refusal.refused)
        throw new OperatorUnavailableError(
          "the operator's wallet is not answering; no session is granted for now",
          refusal.retryAfterS,
        );
      const [row] = await sql<{ ready: boolean; checked: Date | null }[]>`
        select ready, readiness_checked_at as checked from operators where operator_id = ${operatorId}`;
      if (row?.ready) return;
      let ready = false;
      if (!row?.checked || nowMs - row.checked.getTime() >= REPROBE_MS) {
        let p = inFlight.get(operatorId);
        if (!p) {
          p = probeAndStore(sql, client, operatorId, Date.now()).finally(() => inFlight.delete(operatorId));
          inFlight.set(operatorId, p);
        }
        ready = (await p)?.ready ?? false;
      }
      if (!ready)
        throw new OperatorUnavailableError(
          "the operator's callbacks are not configured and working yet (readiness probe failed); see GET /admin/operators/{id}",
          Math.ceil(REPROBE_MS / 1000),
          'OPERATOR_NOT_READY',
        );
    },
  };
}
