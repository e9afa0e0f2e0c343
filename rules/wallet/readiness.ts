/**
 * Operator readiness (docs/contract.md "Operator callbacks": "The balance and betting callbacks must be
 * configured and working before the session endpoint is used"), pure: what the answers of a
 * readiness probe mean. No I/O, no clock.
 *
 * The probe (lib/http/operator-probe.ts) makes two kinds of checks:
 * - `balance`: the signed balance callback for the readiness test player must be answered 2xx with
 *   a balance (under status-in-body, its `status` one of the preset's success statuses): that proves
 *   the URL, the signature and the operator's own wallet;
 * - `path`: every other configured callback path (Register Bet, Win or Earnings, Rollback, the
 *   round-end path) gets a signed request with no money fields, which no wallet can book; any HTTP
 *   answer below 500 other than 404 and 405 proves the route exists (a 400 for the body is the
 *   expected one).
 * A check that got no answer in the operator's timeout, no connection, or another answer fails.
 * The operator is ready when every check passed.
 */

/** One check's outcome: an HTTP status and body, no answer in time, or no exchange. */
export type ProbeAnswer =
  | { readonly type: 'answer'; readonly status: number; readonly text: string; readonly ms: number }
  | { readonly type: 'timeout'; readonly ms: number }
  | { readonly type: 'error'; readonly reason: string };

export interface ProbeCheck {
  readonly name: string;
  readonly kind: 'balance' | 'path';
  readonly method: 'POST' | 'GET';
  readonly path: string;
}

export interface CheckResult extends ProbeCheck {
  readonly ok: boolean;
  readonly detail: string;
}

export interface Readiness {
  readonly ready: boolean;
  /** Unix ms of the probe. */
  readonly checkedAt: number;
  readonly checks: readonly CheckResult[];
}

/** What one answer means for `check`; `okStatuses` are the status-in-body success statuses (or none). */
export function judgeCheck(
  check: ProbeCheck,
  answer: ProbeAnswer,
  okStatuses: readonly string[],
): CheckResult {
  if (answer.type === 'timeout') return { ...check, ok: false, detail: `no answer within ${answer.ms} ms` };
  if (answer.type === 'error') return { ...check, ok: false, detail: answer.reason };
  const head = `HTTP ${answer.status} in ${Math.round(answer.ms)} ms`;
  if (check.kind === 'path') {
    const ok = answer.status < 500 && answer.status !== 404 && answer.status !== 405;
    return {
      ...check,
      ok,
      detail: ok ? `${head}: the route answers` : `${head}: no such route, or it fails`,
    };
  }
  if (answer.status < 200 || answer.status >= 300) {
    const why =
      answer.status === 401 ? ': signature refused (is the signing secret the one we sign with?)' : '';
    return { ...check, ok: false, detail: `${head}${why}` };
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return { ...check, ok: false, detail: `${head}: the body is not JSON` };
  }
  if (okStatuses.length > 0 && !okStatuses.includes(String(body.status)))
    return { ...check, ok: false, detail: `${head}: status ${String(body.status)}` };
  const balance = body.balance;
  if (typeof balance !== 'string' && typeof balance !== 'number')
    return { ...check, ok: false, detail: `${head}: no balance in the answer` };
  return { ...check, ok: true, detail: `${head}: balance ${String(balance)}` };
}

/** The operator's readiness from its checks' results at `checkedAt`. */
export function readinessOf(checks: readonly CheckResult[], checkedAt: number): Readiness {
  return { ready: checks.length > 0 && checks.every((c) => c.ok), checkedAt, checks };
}
