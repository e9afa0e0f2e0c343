/**
 * The session's operator's wallet callbacks (lib/db/wallet-callbacks.ts, with the operator forced
 * to the session's: another operator's callback is 404 exactly as a missing one):
 *
 *   GET  /api/portal/callbacks?user_id&tx_id&round_id&from&to&status&limit → {callbacks}
 *   GET  /api/portal/callbacks/:tx_id → one callback with every attempt
 *   POST /api/portal/callbacks/redrive {tx_ids? | all: true, status?} → {redriven}
 *
 * `from` and `to` select the last change in [from, to); `status` takes the admin list's values
 * (default here: any).
 */
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import {
  type CallbackFilter,
  type CallbackView,
  getCallback,
  listCallbacks,
  readAttempts,
  redriveCallbacks,
} from '../../../lib/db/wallet-callbacks.ts';
import { parseInput } from '../access/input.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { requirePortal } from './guard.ts';
import { portalCallbackQuery, portalRedriveBody, txParams } from './input.ts';
import { callbackIdsOfRound, roundsOfCallbacks } from './portal-store.ts';
import { portalSchemas } from './schemas.ts';

const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/** A callback as the portal shows it; `next_attempt_at` only while it is still to be sent. */
export function portalCallback(c: CallbackView, roundId: number | null) {
  return {
    tx_id: c.tx_id,
    kind: c.kind,
    bet_tx_id: c.bet_tx_id,
    user_id: c.user_id,
    round_id: roundId,
    amount_minor: c.amount_minor,
    currency: c.currency,
    status: c.status,
    attempts: c.attempts,
    next_attempt_at: c.status === 'due' || c.status === 'in_flight' ? iso(c.next_attempt_at) : null,
    last_answer: c.last_answer,
    last_error: c.last_error,
    created_at: iso(c.created_at) as string,
    updated_at: iso(c.updated_at) as string,
  };
}

/** `list` with each callback's round. */
async function withRounds(sql: Sql, list: readonly CallbackView[]) {
  const rounds = await roundsOfCallbacks(
    sql,
    list.map((c) => c.tx_id),
  );
  return list.map((c) => portalCallback(c, rounds.get(c.tx_id) ?? null));
}

/** Registers the three callback routes. */
export function portalCallbackRoutes(
  app: FastifyInstance,
  deps: { sql: Sql; budget: Budget; now: () => number },
): void {
  const { sql, now } = deps;
  const guard = { sql, budget: deps.budget };

  app.get('/api/portal/callbacks', { schema: portalSchemas.callbacks }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    const q = parseInput(portalCallbackQuery, req.query, 'querystring');
    const from = q.from === undefined ? undefined : Date.parse(q.from);
    const to = q.to === undefined ? undefined : Date.parse(q.to);
    if (from !== undefined && to !== undefined && to < from)
      throw new InvalidInputError('INVALID_INPUT', 'to: must not be before from');
    const ofRound =
      q.round_id === undefined ? undefined : await callbackIdsOfRound(sql, s.operator_id, q.round_id);
    if (ofRound !== undefined && ofRound.length === 0) return { callbacks: [] };
    const f: CallbackFilter = {
      status: q.status,
      operatorId: s.operator_id,
      limit: q.limit,
      ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
      ...(q.tx_id !== undefined ? { txId: q.tx_id } : {}),
      ...(ofRound !== undefined ? { txIds: ofRound } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    };
    return { callbacks: await withRounds(sql, await listCallbacks(sql, f)) };
  });

  app.get('/api/portal/callbacks/:tx_id', { schema: portalSchemas.callback }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    const { tx_id } = parseInput(txParams, req.params, 'params');
    const c = await getCallback(sql, tx_id);
    // Another operator's callback is answered as a missing one: its existence is not shown.
    if (!c || c.operator_id !== s.operator_id)
      throw new NotFoundError('CALLBACK_NOT_FOUND', `no wallet callback with provider_tx_id ${tx_id}`);
    // The newest attempts (readAttempts' bound), so one answer stays bounded however often the
    // callback was re-driven; attempts_total says how many there are.
    const page = await readAttempts(sql, tx_id, s.operator_id);
    return {
      ...portalCallback(c, c.job.bet.round_id ?? null),
      attempts: page.attempts,
      attempts_total: page.total,
    };
  });

  app.post('/api/portal/callbacks/redrive', { schema: portalSchemas.redrive }, async (req, reply) => {
    const s = await requirePortal(guard, req, reply);
    const b = parseInput(portalRedriveBody, req.body, 'body');
    const f: CallbackFilter = {
      status: b.status,
      operatorId: s.operator_id,
      ...(b.tx_ids !== undefined ? { txIds: b.tx_ids } : {}),
    };
    const redriven = await redriveCallbacks(sql, f, now());
    if (redriven.length > 0)
      req.log.info(
        { operator_id: s.operator_id, tx_ids: redriven.map((c) => c.tx_id) },
        'wallet callbacks re-driven from the portal',
      );
    return { redriven: await withRounds(sql, redriven) };
  });
}
