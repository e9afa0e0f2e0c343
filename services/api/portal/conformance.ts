/**
 * POST /api/portal/conformance {} → {passed, rows}: the wallet conformance kit
 * (lib/wallet-conformance, docs/operators.md "Conformance kit") run against the session's
 * operator as its row stands (base URL, form, paths, secret, answer table, timeout), with a fresh
 * test player, every row with every request and answer.
 *
 * Run time is bounded: no row starts after CONFORMANCE_BUDGET_MS (the rows left fail as "not
 * run"), and a row under way ends within its requests' own timeouts (the operator's timeout_ms plus
 * the kit's RULE_SLACK_MS each). One run at a time per operator in this process: a second one
 * while the first runs waits for it and gets its report.
 */
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import { readOperatorConfig } from '../../../lib/db/operator-config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { CallbackClient } from '../../../lib/http/callback-client.ts';
import type { Recorded } from '../../../lib/wallet-conformance/driver.ts';
import { type ConformanceReport, runConformance } from '../../../lib/wallet-conformance/runner.ts';
import { testPlayer } from '../../../lib/wallet-conformance/target.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { parseInput } from '../access/input.ts';
import { AuthError } from '../errors.ts';
import { requirePortal } from './guard.ts';
import { emptyBody } from './input.ts';
import { portalSchemas } from './schemas.ts';

/** No conformance row starts later than this after the run began, ms. */
export const CONFORMANCE_BUDGET_MS = 60_000;

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** One recorded exchange as the portal shows it. */
function exchangeJson(x: Recorded) {
  const a = x.answer;
  return {
    step: x.step,
    request: {
      method: x.request.method,
      url: x.request.url,
      headers: { 'webhook-id': x.request.webhook_id, 'content-type': 'application/json' },
      signing: x.request.signing,
      body: JSON.stringify(x.request.body),
    },
    response:
      'status' in a
        ? { status: a.status, body: text(a.body) }
        : { status: null as number | null, body: null },
    error: 'timeout_ms' in a ? `no answer within ${a.timeout_ms} ms` : 'error' in a ? a.error : null,
    latency_ms: x.ms,
    class: x.class,
  };
}

/** The kit's report as the portal answers it. */
export function conformanceJson(r: ConformanceReport) {
  return {
    passed: r.passed,
    started_at: r.started_at,
    player: r.player,
    rows: r.rows.map((row) => ({
      id: row.id,
      title: row.title,
      rule: row.rule,
      ok: row.pass,
      detail: row.detail,
      ms: row.ms,
      exchanges: row.exchanges.map(exchangeJson),
    })),
  };
}

/** Registers POST /api/portal/conformance. */
export function portalConformanceRoute(
  app: FastifyInstance,
  deps: { sql: Sql; budget: Budget; client: CallbackClient; currencies: Currencies },
): void {
  const { sql, client, currencies } = deps;
  const running = new Map<string, Promise<ConformanceReport>>();
  app.post('/api/portal/conformance', { schema: portalSchemas.conformance }, async (req, reply) => {
    const s = await requirePortal({ sql, budget: deps.budget }, req, reply);
    parseInput(emptyBody, req.body ?? {}, 'body');
    let run = running.get(s.operator_id);
    if (!run) {
      const operator = await readOperatorConfig(sql, s.operator_id);
      if (!operator) throw new AuthError(401, 'unknown', 'the operator of this portal session is disabled');
      run = runConformance(
        { operator, player: testPlayer({}) },
        { client, currencies, deadlineAt: Date.now() + CONFORMANCE_BUDGET_MS },
      ).finally(() => running.delete(s.operator_id));
      running.set(s.operator_id, run);
    }
    return conformanceJson(await run);
  });
}
