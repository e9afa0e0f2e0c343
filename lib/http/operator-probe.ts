/**
 * The operator readiness probe (the rules are rules/wallet/readiness.ts): a
 * signed balance callback for the readiness test player, and a signed request with no money fields
 * on every other configured callback path, all at once, each within the operator's timeout.
 * Nothing a probe sends can move money. Run when an operator is registered or changed (admin API,
 * `npm run operator:probe`) and again by request-access while an operator is not ready.
 */

import { FORM_B_REWARDS_PATH, FORM_B_ROLLBACK_PATH } from '../../rules/wallet/bodies.ts';
import {
  judgeCheck,
  type ProbeAnswer,
  type ProbeCheck,
  type Readiness,
  readinessOf,
} from '../../rules/wallet/readiness.ts';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import type { OperatorCallbackConfig } from '../db/operator-config.ts';
import type { CallbackClient } from './callback-client.ts';

/** The player every readiness probe asks the balance of (an operator must accept it: docs/operators.md). */
export const READINESS_PLAYER = 'platform-readiness-probe';

/** The checks of `op`: its balance callback, then each configured path of its form. */
export function probeChecks(op: OperatorCallbackConfig): ProbeCheck[] {
  const checks: ProbeCheck[] = [
    { name: 'balance', kind: 'balance', method: 'POST', path: op.balancePath },
    { name: 'bet', kind: 'path', method: 'POST', path: op.betPath },
  ];
  if (op.form === 'A')
    checks.push(
      { name: 'win', kind: 'path', method: 'POST', path: op.winPath },
      { name: 'rollback', kind: 'path', method: 'POST', path: op.rollbackPath },
    );
  else
    checks.push(
      { name: 'rewards', kind: 'path', method: 'GET', path: FORM_B_REWARDS_PATH },
      { name: 'rollback', kind: 'path', method: 'GET', path: FORM_B_ROLLBACK_PATH },
    );
  if (op.roundClose === 'round-end' && op.roundEndPath)
    checks.push({ name: 'round-end', kind: 'path', method: 'POST', path: op.roundEndPath });
  return checks;
}

/**
 * Probes `op` now. Never throws: every failure is a failed check.
 * @param nowMs wall-clock Unix ms, for the signatures and `checkedAt`.
 */
export async function probeOperator(
  op: OperatorCallbackConfig,
  client: CallbackClient,
  nowMs: number,
  currency = 'USD',
): Promise<Readiness> {
  const url = (path: string) => `${op.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
  const results = await Promise.all(
    probeChecks(op).map(async (check) => {
      const body =
        check.kind === 'balance'
          ? { user_id: READINESS_PLAYER, currency, session_token: 'readiness-probe' }
          : { action: 'readiness-probe' };
      const t0 = performance.now();
      const ex = await client.send(
        { method: check.method, url: url(check.path), webhookId: `probe-${check.name}-${nowMs}`, body },
        signingSecretsAt(op, nowMs),
        op.timeoutMs,
        nowMs,
      );
      const ms = performance.now() - t0;
      const answer: ProbeAnswer =
        ex.type === 'answer'
          ? { type: 'answer', status: ex.status, text: ex.text, ms }
          : ex.type === 'timeout'
            ? { type: 'timeout', ms: ex.timeoutMs }
            : { type: 'error', reason: ex.reason };
      const okStatuses = op.answers.preset === 'status-in-body' ? op.answers.okStatuses : [];
      return judgeCheck(check, answer, okStatuses);
    }),
  );
  return readinessOf(results, nowMs);
}
