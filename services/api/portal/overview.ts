/**
 * The session's operator at a glance and its settings:
 *
 *   GET   /api/portal/overview → {operator, readiness, breaker, callbacks}
 *   POST  /api/portal/probe → {readiness} (the readiness probe, now)
 *   GET   /api/portal/settings → {operator}
 *   PATCH /api/portal/settings {bet_path?, …} → {operator, readiness} (probed again after the change)
 *
 * The readiness is the admin API's view (access/readiness.ts), the breaker lib/db/operator-breakers.ts's,
 * the callback figures lib/db/wallet-callbacks.ts callbackStats over the last hour.
 */
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import { readBreaker } from '../../../lib/db/operator-breakers.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { callbackStats } from '../../../lib/db/wallet-callbacks.ts';
import type { CallbackClient } from '../../../lib/http/callback-client.ts';
import type { OperatorRow } from '../access/guards.ts';
import { parseInput } from '../access/input.ts';
import { operatorView, patchOperator } from '../access/operators.ts';
import { activeOperator } from '../access/operators-store.ts';
import { probeAndStore, readinessView } from '../access/readiness.ts';
import { AuthError } from '../errors.ts';
import { requirePortal } from './guard.ts';
import { emptyBody, settingsBody } from './input.ts';
import { portalSchemas } from './schemas.ts';

/**
 * What the portal shows of its operator: the admin view (`operatorView`) less the retry policy, the
 * stored readiness (the overview carries its own) and the registry's timestamps. No token or secret
 * is in either.
 */
export function portalOperator(o: OperatorRow) {
  const { retry_policy, readiness, created_at, disabled_at, ...settings } = operatorView(o);
  return settings;
}

const HOUR_MS = 3_600_000;

/** Registers the overview, probe and settings routes. */
export function portalOverviewRoutes(
  app: FastifyInstance,
  deps: { sql: Sql; budget: Budget; client: CallbackClient; now: () => number },
): void {
  const { sql, client, now } = deps;
  const guard = { sql, budget: deps.budget };
  /** The session's operator's row; a session outliving its operator's row is refused like an ended one. */
  const operatorOf = async (id: string): Promise<OperatorRow> => {
    const o = await activeOperator(sql, id);
    if (!o) throw new AuthError(401, 'unknown', 'the operator of this portal session is disabled');
    return o;
  };
  const probe = async (id: string) => {
    await probeAndStore(sql, client, id, Date.now());
    return readinessView((await operatorOf(id)).readiness);
  };

  app.get('/api/portal/overview', { schema: portalSchemas.overview }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    const t = now();
    const [o, breaker, stats] = await Promise.all([
      operatorOf(s.operator_id),
      readBreaker(sql, s.operator_id),
      callbackStats(sql, s.operator_id, t - HOUR_MS, t),
    ]);
    return {
      operator: portalOperator(o),
      readiness: readinessView(o.readiness),
      breaker: {
        state: breaker.state,
        failures: breaker.failures,
        retry_at: breaker.retryAt === null ? null : new Date(breaker.retryAt).toISOString(),
        last_error: breaker.lastError,
      },
      callbacks: stats,
    };
  });

  app.post('/api/portal/probe', { schema: portalSchemas.probe }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    parseInput(emptyBody, req.body ?? {}, 'body');
    return { readiness: await probe(s.operator_id) };
  });

  app.get('/api/portal/settings', { schema: portalSchemas.settings }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    return { operator: portalOperator(await operatorOf(s.operator_id)) };
  });

  app.patch('/api/portal/settings', { schema: portalSchemas.updateSettings }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    const b = parseInput(settingsBody, req.body, 'body');
    await patchOperator(sql, await operatorOf(s.operator_id), b);
    const readiness = await probe(s.operator_id);
    return { operator: portalOperator(await operatorOf(s.operator_id)), readiness };
  });
}
