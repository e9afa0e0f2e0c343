/**
 * POST /api/portal/test-callback {} → {request, response, latency_ms, class, error}: one signed
 * Balance request (docs/contract.md "Implemented by the operator"; rules/wallet/bodies.ts
 * buildBalanceRequest) to the session's operator, for its most recent real-money player, or the
 * readiness probe's player (lib/http/operator-probe.ts READINESS_PLAYER) when it has none. A
 * balance request moves no money. The answer's class is `ok` when it is a success under the
 * operator's answer preset with a `balance` in its body, else `failed` (`error` says why).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import { readOperatorConfig } from '../../../lib/db/operator-config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { CallbackClient } from '../../../lib/http/callback-client.ts';
import { READINESS_PLAYER } from '../../../lib/http/operator-probe.ts';
import { buildBalanceRequest } from '../../../rules/wallet/bodies.ts';
import { signingSecretsAt } from '../../../rules/wallet/signing.ts';
import { parseInput } from '../access/input.ts';
import { AuthError } from '../errors.ts';
import { requirePortal } from './guard.ts';
import { emptyBody } from './input.ts';
import { latestPlayer } from './portal-store.ts';
import { portalSchemas } from './schemas.ts';

/** Why an answer is not a good balance answer under `preset`, or null when it is. */
function balanceProblem(preset: string, okStatuses: readonly string[], status: number, text: string) {
  const success = preset === 'http-status' ? status >= 200 && status < 300 : status === 200;
  if (!success) return `HTTP ${status}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'body is not JSON';
  }
  if (body === null || typeof body !== 'object') return 'body is not a JSON object';
  const b = body as Record<string, unknown>;
  if (preset === 'status-in-body' && !okStatuses.includes(String(b.status)))
    return `status ${String(b.status)} is not a success`;
  if (typeof b.balance !== 'string' && typeof b.balance !== 'number') return 'no balance in the body';
  return null;
}

/** Registers POST /api/portal/test-callback. */
export function portalTestCallbackRoute(
  app: FastifyInstance,
  deps: { sql: Sql; budget: Budget; client: CallbackClient },
): void {
  const { sql, client } = deps;
  app.post('/api/portal/test-callback', { schema: portalSchemas.testCallback }, async (req, reply) => {
    const s = await requirePortal({ sql, budget: deps.budget }, req, reply);
    parseInput(emptyBody, req.body ?? {}, 'body');
    const op = await readOperatorConfig(sql, s.operator_id);
    if (!op) throw new AuthError(401, 'unknown', 'the operator of this portal session is disabled');
    const p = (await latestPlayer(sql, s.operator_id)) ?? {
      user_id: READINESS_PLAYER,
      currency: 'USD',
      session_token: 'readiness-probe',
    };
    const request = buildBalanceRequest(
      op,
      { userId: p.user_id, currency: p.currency, sessionToken: p.session_token },
      `balance-test-${randomUUID()}`,
    );
    const at = Date.now();
    const t0 = performance.now();
    // Signed as every request to it is now: during a rotation's overlap, with both secrets.
    const ex = await client.send(request, signingSecretsAt(op, at), op.timeoutMs, at);
    const latency = Math.round(performance.now() - t0);
    const okStatuses = op.answers.preset === 'status-in-body' ? op.answers.okStatuses : [];
    const error =
      ex.type === 'timeout'
        ? `no answer within ${ex.timeoutMs} ms`
        : ex.type === 'error'
          ? ex.reason
          : balanceProblem(op.answers.preset, okStatuses, ex.status, ex.text);
    return {
      request: {
        method: request.method,
        url: request.url,
        headers: ex.headers,
        body: JSON.stringify(request.body),
      },
      response: ex.type === 'answer' ? { status: ex.status, body: ex.text } : { status: null, body: null },
      latency_ms: latency,
      class: error === null ? 'ok' : 'failed',
      error,
    };
  });
}
