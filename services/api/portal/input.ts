/**
 * Input rules of the operator portal, as zod schemas validated in the handlers (access/input.ts
 * parseInput: strict, no coercion, every violation a 400 naming the field) and, through docSchema,
 * the routes' descriptions in /openapi.json. The callbacks query and re-drive reuse the admin
 * rules of access/wallet-callbacks.ts without `operator_id`: the session decides the operator.
 */
import { z } from 'zod';
import {
  CALLBACK_LIMITS,
  CALLBACK_STATUS_FILTERS,
  REDRIVE_STATUSES,
} from '../../../lib/db/wallet-callbacks.ts';
import { updateOperatorBody } from '../access/input.ts';
import { callbackQuery } from '../access/wallet-callbacks.ts';

/** Lifetime of a portal-link token, s: bounds and default. */
export const LINK_TTL_S = { min: 60, max: 3600, default: 900 } as const;
/** Lifetime of a portal session (and the cookie's Max-Age), s: 8 h. */
export const SESSION_TTL_S = 8 * 3600;
/** Overlap of a rotated signing secret, s: 1 min to 7 days. */
export const OVERLAP_S = { min: 60, max: 604_800 } as const;

/** Body of POST /admin/operators/:id/portal-link. */
export const portalLinkBody = z
  .object({ ttl_s: z.number().int().min(LINK_TTL_S.min).max(LINK_TTL_S.max).default(LINK_TTL_S.default) })
  .strict();

/** A link token as minted: `plk_` + 43 base64url characters. */
export const LINK_TOKEN_RE = /^plk_[A-Za-z0-9_-]{43}$/;

/** Body of POST /api/portal/session. */
export const sessionBody = z
  .object({ link_token: z.string().max(200).regex(LINK_TOKEN_RE, 'must be a plk_ link token') })
  .strict();

/** A body that must be empty (`{}`) or absent. */
export const emptyBody = z.object({}).strict();

const txIdText = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, 'must be a provider_tx_id (a positive decimal integer)')
  .transform(Number)
  .pipe(z.number().max(Number.MAX_SAFE_INTEGER, 'must be a provider_tx_id (a positive decimal integer)'));

/** Query of GET /api/portal/callbacks: the admin list's filters without operator_id, plus round_id. */
export const portalCallbackQuery = callbackQuery.omit({ operator_id: true }).extend({
  round_id: txIdText.optional().meta({ description: 'The round of the bet the callback belongs to.' }),
  status: z.enum(CALLBACK_STATUS_FILTERS).default('any'),
});

/** Path of GET /api/portal/callbacks/:tx_id. */
export const txParams = z.object({ tx_id: txIdText }).strict();

/** Body of POST /api/portal/callbacks/redrive: which of the session's operator's callbacks. */
export const portalRedriveBody = z
  .object({
    tx_ids: z
      .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
      .min(1)
      .max(CALLBACK_LIMITS.max)
      .optional(),
    status: z.enum(REDRIVE_STATUSES).default('waiting'),
    all: z.boolean().default(false),
  })
  .strict()
  .refine((b) => b.all !== (b.tx_ids !== undefined), {
    message: 'give tx_ids, or all: true (not both)',
    path: ['tx_ids'],
  });

/** Body of POST /api/portal/secret/rotate. */
export const rotateBody = z
  .object({
    overlap_s: z.number().int().min(OVERLAP_S.min).max(OVERLAP_S.max),
    force: z
      .boolean()
      .optional()
      .describe(
        'Rotate even while the secret a previous rotation replaced is still valid: that older secret stops signing at once (without it, such a rotation is a 409).',
      ),
  })
  .strict();

/**
 * Body of PATCH /api/portal/settings: the callback settings an operator may change itself, with
 * the admin PATCH's rules (access/input.ts updateOperatorBody); name, callback form, base URL and
 * retry policy stay the admin's.
 */
const SETTINGS = [
  'bet_path',
  'win_path',
  'balance_path',
  'rollback_path',
  'timeout_ms',
  'answer_table',
  'round_close',
  'round_end_path',
  'amount_format',
] as const;
const adminField = updateOperatorBody.shape;
export const settingsBody = z
  .object(
    Object.fromEntries(SETTINGS.map((k) => [k, adminField[k]])) as Pick<
      typeof adminField,
      (typeof SETTINGS)[number]
    >,
  )
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change', path: [] });
export type SettingsBody = z.infer<typeof settingsBody>;

/** Query of GET /api/portal/reconciliation. */
export const reconciliationQuery = z
  .object({
    date: z.iso.date('must be a UTC day as YYYY-MM-DD'),
    format: z.enum(['json', 'csv']).default('json'),
  })
  .strict();
