/**
 * The operators registry, admin only: POST /admin/operators creates an operator
 * and shows its bearer `api_token` once (only its SHA-256 is stored) and its Standard Webhooks
 * `signing_secret` (stored: the wallet-saga signs every callback with it); GET lists or reads
 * operators without secrets, with their readiness (the probe runs when one is
 * registered or changed with PATCH, and on POST /admin/operators/:id/probe); DELETE disables one: its token stops working and, for the admin API, it
 * is gone (GET and a second DELETE answer 404, the list leaves it out: a deleted resource
 * is not available), while its row stays for the sessions and transactions that reference it.
 */
import type { FastifyInstance } from 'fastify';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import { newOperatorId, newOperatorToken, newSigningSecret, sha256 } from '../../../lib/auth/secrets.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { CallbackClient } from '../../../lib/http/callback-client.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { type OperatorRow, requireAdmin } from './guards.ts';
import { createOperatorBody, parseInput, type UpdateOperatorBody, updateOperatorBody } from './input.ts';
import {
  activeOperator,
  activeOperators,
  disableOperator,
  insertOperator,
  updateOperator,
} from './operators-store.ts';
import { probeAndStore, readinessView } from './readiness.ts';
import { adminSchemas } from './schemas.ts';

/** An operator as the admin routes show it: everything but the token hash and the signing secret. */
export function operatorView(o: OperatorRow) {
  return {
    operator_id: o.operator_id,
    name: o.name,
    callback_form: o.callback_form,
    base_url: o.base_url,
    bet_path: o.bet_path,
    win_path: o.win_path,
    balance_path: o.balance_path,
    rollback_path: o.rollback_path,
    timeout_ms: o.timeout_ms,
    retry_policy: o.retry_policy,
    answer_table: o.answer_table,
    round_close: o.round_close,
    round_end_path: o.round_end_path,
    amount_format: o.amount_format,
    readiness: readinessView(o.readiness),
    created_at: o.created_at.toISOString(),
    disabled_at: o.disabled_at?.toISOString() ?? null,
  };
}

/**
 * Overwrites the settings of operator `o` given in `b`, each replacing the stored one (the rest
 * stay): PATCH /admin/operators/:id and the portal's PATCH /api/portal/settings.
 * @throws InvalidInputError (400) when round_close would be round-end without a round_end_path;
 *   the postgres.js error.
 */
export async function patchOperator(sql: Sql, o: OperatorRow, b: UpdateOperatorBody): Promise<void> {
  const roundClose = b.round_close ?? o.round_close;
  const roundEndPath = b.round_end_path === undefined ? o.round_end_path : b.round_end_path;
  if (roundClose === 'round-end' && !roundEndPath)
    throw new InvalidInputError('INVALID_INPUT', 'round_end_path: required when round_close is round-end');
  await updateOperator(sql, o.operator_id, {
    name: b.name ?? o.name,
    callback_form: b.callback_form ?? o.callback_form,
    base_url: b.base_url ?? o.base_url,
    bet_path: b.bet_path ?? o.bet_path,
    win_path: b.win_path ?? o.win_path,
    balance_path: b.balance_path ?? o.balance_path,
    rollback_path: b.rollback_path ?? o.rollback_path,
    timeout_ms: b.timeout_ms ?? o.timeout_ms,
    retry_policy: (b.retry_policy ?? o.retry_policy) as OperatorRow['retry_policy'],
    answer_table: (b.answer_table ?? o.answer_table) as OperatorRow['answer_table'],
    round_close: roundClose,
    round_end_path: roundEndPath,
    amount_format: b.amount_format ?? o.amount_format,
  });
}

/** Registers the admin routes of operators on `app`. */
export function operatorRoutes(
  app: FastifyInstance,
  deps: { sql: Sql; table: KeyLookup; now: () => number; client: CallbackClient },
) {
  const { sql, table, now, client } = deps;
  /** Probes `id` and reads its row back with the result. */
  const probed = async (id: string): Promise<OperatorRow | undefined> => {
    await probeAndStore(sql, client, id, Date.now());
    return activeOperator(sql, id);
  };
  const found = (o: OperatorRow | undefined, id: string): OperatorRow => {
    if (!o) throw new NotFoundError('OPERATOR_NOT_FOUND', `no operator ${id}`);
    return o;
  };

  app.post('/admin/operators', { schema: adminSchemas.create }, async (req, reply) => {
    requireAdmin(table, req, now());
    const b = parseInput(createOperatorBody, req.body, 'body');
    const apiToken = newOperatorToken();
    const signingSecret = newSigningSecret();
    const o = await insertOperator(sql, newOperatorId(), b, sha256(apiToken), signingSecret);
    // Registered: its readiness probe runs now; request-access waits for it to pass.
    const withReadiness = (await probed(o.operator_id)) ?? o;
    return reply
      .code(201)
      .send({ ...operatorView(withReadiness), api_token: apiToken, signing_secret: signingSecret });
  });

  app.get('/admin/operators', { schema: adminSchemas.list }, async (req) => {
    requireAdmin(table, req, now());
    return { operators: (await activeOperators(sql)).map(operatorView) };
  });

  app.get<{ Params: { id: string } }>('/admin/operators/:id', { schema: adminSchemas.get }, async (req) => {
    requireAdmin(table, req, now());
    return operatorView(found(await activeOperator(sql, req.params.id), req.params.id));
  });

  app.patch<{ Params: { id: string } }>(
    '/admin/operators/:id',
    { schema: adminSchemas.update },
    async (req) => {
      requireAdmin(table, req, now());
      const b = parseInput(updateOperatorBody, req.body, 'body');
      const o = found(await activeOperator(sql, req.params.id), req.params.id);
      await patchOperator(sql, o, b);
      return operatorView(found(await probed(o.operator_id), o.operator_id));
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/operators/:id/probe',
    { schema: adminSchemas.probe },
    async (req) => {
      requireAdmin(table, req, now());
      found(await activeOperator(sql, req.params.id), req.params.id);
      return operatorView(found(await probed(req.params.id), req.params.id));
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/admin/operators/:id',
    { schema: adminSchemas.disable },
    async (req) => {
      requireAdmin(table, req, now());
      return operatorView(found(await disableOperator(sql, req.params.id), req.params.id));
    },
  );
}
