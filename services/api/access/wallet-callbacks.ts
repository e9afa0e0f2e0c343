/**
 * Ops over the wallet saga's callbacks, admin only, the REST face of
 * `npm run dead-letters -- callbacks …` (both on lib/db/wallet-callbacks.ts):
 *
 *   GET  /admin/wallet/callbacks?status&operator_id&user_id&tx_id&from&to&limit → {callbacks}
 *   GET  /admin/wallet/callbacks/:tx_id → one callback with its job, lease and last bodies (404: none)
 *   POST /admin/wallet/callbacks/redrive {status?, operator_id?, user_id?, tx_ids?, from?, to?,
 *        limit?, dry_run?, all?} → {dry_run, redriven}: parked or retrying callbacks due now with a
 *        fresh schedule, as they stood (an empty list when none matches)
 *
 * Times in and out are ISO 8601 (`from` inclusive, `to` exclusive, of the callback's last change).
 * Inputs follow the API's input policy (services/api/input-policy.ts): strict zod rules, no
 * coercion, unknown fields refused, every violation a 400 naming the field. A re-drive must name
 * which callbacks (operator_id, user_id, tx_ids, from or to) or say `all: true`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import {
  CALLBACK_LIMITS,
  CALLBACK_STATUS_FILTERS,
  type CallbackFilter,
  callbackJson,
  getCallback,
  hasSelection,
  listCallbacks,
  REDRIVE_STATUSES,
  redriveCallbacks,
} from '../../../lib/db/wallet-callbacks.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { TEXT_RE } from '../input-policy.ts';
import { requireAdmin } from './guards.ts';
import { docSchema, parseInput } from './input.ts';
import { admin, adminErr, closed, problem } from './schemas.ts';

/** Longest operator_id and user_id (user_id's bound in request-access). */
const ID_MAX = 128;
const id = z.string().min(1).max(ID_MAX).regex(TEXT_RE, 'must not contain NUL');
/** ISO 8601 date-time with a zone (at most 35 characters: nanoseconds and an offset). */
const time = z.iso.datetime({ offset: true }).max(35);
const MAX_TX = Number.MAX_SAFE_INTEGER;
const txIdText = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, 'must be a provider_tx_id (a positive decimal integer)')
  .transform(Number)
  .pipe(z.number().max(MAX_TX, 'must be a provider_tx_id (a positive decimal integer)'));

/** Query of GET /admin/wallet/callbacks. */
export const callbackQuery = z
  .object({
    status: z.enum(CALLBACK_STATUS_FILTERS).default('waiting'),
    operator_id: id.optional(),
    user_id: id.optional(),
    tx_id: txIdText.optional(),
    from: time.optional(),
    to: time.optional(),
    limit: z
      .string()
      .regex(/^(?:[1-9][0-9]{0,2}|1000)$/, `must be an integer from 1 to ${CALLBACK_LIMITS.max}`)
      .transform(Number)
      .default(CALLBACK_LIMITS.list),
  })
  .strict();

/** Body of POST /admin/wallet/callbacks/redrive. */
export const redriveBody = z
  .object({
    status: z.enum(REDRIVE_STATUSES).default('waiting'),
    operator_id: id.optional(),
    user_id: id.optional(),
    tx_ids: z.array(z.number().int().min(1).max(MAX_TX)).min(1).max(CALLBACK_LIMITS.max).optional(),
    from: time.optional(),
    to: time.optional(),
    limit: z.number().int().min(1).max(CALLBACK_LIMITS.max).optional(),
    dry_run: z.boolean().default(false),
    all: z.boolean().default(false),
  })
  .strict();

const txParams = z.object({ tx_id: txIdText }).strict();

/**
 * The filter of parsed input: `from`/`to` select `updated_at` in [from, to), so `to` equal to
 * `from` is an empty range (valid, matches nothing).
 * @throws InvalidInputError (400) when `to` is before `from`.
 */
function filterOf(q: {
  status: NonNullable<CallbackFilter['status']>;
  operator_id?: string | undefined;
  user_id?: string | undefined;
  tx_id?: number | undefined;
  tx_ids?: number[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit?: number | undefined;
}): CallbackFilter {
  const from = q.from === undefined ? undefined : Date.parse(q.from);
  const to = q.to === undefined ? undefined : Date.parse(q.to);
  if (from !== undefined && to !== undefined && to < from)
    throw new InvalidInputError('INVALID_INPUT', 'to: must not be before from');
  return {
    status: q.status,
    ...(q.operator_id !== undefined ? { operatorId: q.operator_id } : {}),
    ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
    ...(q.tx_id !== undefined ? { txId: q.tx_id } : {}),
    ...(q.tx_ids !== undefined ? { txIds: q.tx_ids } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(q.limit !== undefined ? { limit: q.limit } : {}),
  };
}

// Response bodies, as callbackJson writes them.
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nullable = { type: 'string', nullable: true } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const callbackFields = {
  tx_id: { ...int, description: "The callback's provider_tx_id (its idempotency key)." },
  kind: { type: 'string', enum: ['bet', 'win', 'rollback', 'close'] },
  bet_tx_id: int,
  operator_id: str,
  user_id: str,
  status: { type: 'string', enum: ['due', 'in_flight', 'done', 'parked', 'skipped'] },
  attempts: { ...int, description: 'Attempts of the current schedule (0 after a re-drive).' },
  next_attempt_at: { ...dateTime, description: 'When a due callback is tried next.' },
  created_at: dateTime,
  updated_at: { ...dateTime, description: 'Last change (what from and to filter).' },
  leased_by: { ...nullable, description: 'The saga instance sending it (in flight).' },
  last_answer: { ...nullable, description: 'Class of the last answer: ok, duplicate, refused, failed…' },
  last_code: nullable,
  last_error: nullable,
  last_request: { ...nullable, description: 'The last request body sent (JSON text, excerpt).' },
  last_response: {
    ...nullable,
    description: 'HTTP status and body of the last answer (excerpt), or why none.',
  },
  amount_minor: { ...int, description: 'Minor units of the currency.' },
  currency: str,
};
const callbackView = closed(callbackFields, 'A wallet callback.');
const callbackDetail = closed(
  {
    ...callbackFields,
    job: {
      type: 'object',
      additionalProperties: true,
      description: 'What the saga sends: kind, txId, betTxId, amountMinor and the bet context.',
    },
    player_key: str,
    seq: int,
    lease_until: { ...dateTime, nullable: true },
  },
  'A wallet callback with its job and lease.',
);
const tags = ['callbacks'];

/** Route schemas (docs: the handlers validate with the zod rules above). */
export const walletCallbackSchemas = {
  list: {
    tags,
    summary: 'List wallet callbacks (admin): parked and retrying by default, newest change first.',
    description: 'from and to select updated_at in [from, to); to before from is 400.',
    security: admin,
    querystring: docSchema(callbackQuery),
    response: {
      200: closed({ callbacks: { type: 'array', items: callbackView } }),
      ...adminErr,
      400: problem('Invalid query (the parameter and rule are in detail).'),
    },
  },
  get: {
    tags,
    summary: 'One wallet callback with its job, lease and last request and answer (admin).',
    security: admin,
    params: docSchema(txParams),
    response: { 200: callbackDetail, ...adminErr, 404: problem('No callback with this provider_tx_id.') },
  },
  redrive: {
    tags,
    summary:
      'Re-drive parked or retrying wallet callbacks (admin): due now with a fresh retry schedule; done, skipped and in-flight ones are never touched. Name which (operator_id, user_id, tx_ids, from, to) or send all: true.',
    description:
      'Rules across fields, 400 when broken: all excludes the other selectors; without all, at least one selector; a status of done or skipped cannot be re-driven; to before from.',
    security: admin,
    body: docSchema(redriveBody),
    response: {
      200: closed({
        dry_run: { type: 'boolean' },
        redriven: {
          type: 'array',
          items: callbackView,
          description: 'As they stood before (empty: none matched).',
        },
      }),
      ...adminErr,
    },
  },
} as const;

/** Registers the three admin routes on `app` (inside the access plugin: problem JSON, zod in handlers). */
export function walletCallbackRoutes(
  app: FastifyInstance,
  deps: { sql: Sql; table: KeyLookup; now: () => number },
) {
  const { sql, table, now } = deps;

  app.get('/admin/wallet/callbacks', { schema: walletCallbackSchemas.list }, async (req) => {
    requireAdmin(table, req, now());
    const q = parseInput(callbackQuery, req.query, 'querystring');
    return { callbacks: (await listCallbacks(sql, filterOf(q))).map(callbackJson) };
  });

  app.get('/admin/wallet/callbacks/:tx_id', { schema: walletCallbackSchemas.get }, async (req) => {
    requireAdmin(table, req, now());
    const { tx_id } = parseInput(txParams, req.params, 'params');
    const c = await getCallback(sql, tx_id);
    if (!c) throw new NotFoundError('CALLBACK_NOT_FOUND', `no wallet callback with provider_tx_id ${tx_id}`);
    return callbackJson(c);
  });

  app.post('/admin/wallet/callbacks/redrive', { schema: walletCallbackSchemas.redrive }, async (req) => {
    requireAdmin(table, req, now());
    const b = parseInput(redriveBody, req.body, 'body');
    const f = filterOf(b);
    if (b.all && hasSelection(f))
      throw new InvalidInputError('INVALID_INPUT', 'all: excludes operator_id, user_id, tx_ids, from and to');
    if (!b.all && !hasSelection(f))
      throw new InvalidInputError(
        'INVALID_INPUT',
        'body: name which callbacks (operator_id, user_id, tx_ids, from or to), or send all: true',
      );
    const redriven = await redriveCallbacks(sql, f, now(), b.dry_run);
    if (!b.dry_run && redriven.length > 0)
      req.log.info({ tx_ids: redriven.map((c) => c.tx_id), filter: f }, 'wallet callbacks re-driven by ops');
    return { dry_run: b.dry_run, redriven: redriven.map(callbackJson) };
  });
}
