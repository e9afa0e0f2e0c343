/**
 * Input rules of the session API, as zod schemas. They validate in the handlers (the
 * app's shared ajv coerces types, so `"12"` would pass as a number; here a wrong type is a 400)
 * and, converted with `z.toJSONSchema`, describe the routes in /openapi.json.
 * Defaults and bounds the seed leaves open are in docs/decisions/rest-api/0005-session-api.md.
 */
import { z } from 'zod';
import { currencyTable } from '../../../rules/money/currencies.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../../rules/retry/schedule.ts';
import { ANSWER_PRESETS, REFUSAL_CODES } from '../../../rules/wallet/answers.ts';
import { ROUND_CLOSE_MODES } from '../../../rules/wallet/bodies.ts';
import { InvalidInputError } from '../errors.ts';
import { HTTP_BASE_URL_PATTERN, HTTP_URL_PATTERN, TEXT_RE } from '../input-policy.ts';

/** expires_in_minutes bounds and default (docs/decisions/rest-api/0005-session-api.md). */
export const EXPIRES_IN_MINUTES = { min: 1, max: 1440, default: 30 } as const;
/** Longest `lang` (a BCP 47 tag; RFC 5646 §4.4.1 asks implementations to support at least 35). */
export const LANG_MAX = 35;
/** Largest stake, balance or free-bet value accepted, in major units. */
export const MAX_AMOUNT = 1_000_000;

/** Stored text (services/api/input-policy.ts): 1..max characters, no NUL or lone surrogate. */
const text = (max: number) => z.string().min(1).max(max).regex(TEXT_RE, 'must not contain NUL');

/**
 * A major-unit amount: a JSON number, 0 (when `allowZero`) or more, at most MAX_AMOUNT. How many
 * digits it may have after the point is its currency's exponent (2 USD, 0 JPY, 3 KWD, 8 BTC), which
 * a JSON schema cannot tie to another field (or, for bets, to the session), so the handlers check it
 * (money.ts minorOf, with the float-noise tolerance this rule had for cents).
 */
const money = (allowZero: boolean) => {
  const n = z.number().max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`);
  return (allowZero ? n.nonnegative('must not be negative') : n.positive('must be positive')).meta({
    description: `Major units, at most the currency's exponent of decimals (USD 2, JPY 0, KWD 3, BTC 8).`,
  });
};

/**
 * A currency code. /openapi.json lists the codes of the default table (ISO 4217 with a minor unit, no
 * funds, and the default crypto currencies); the handlers check the configured one (money.ts currencyOf).
 */
const currencyCode = z
  .string()
  .regex(/^[A-Z][A-Z0-9]{1,9}$/, 'must be a currency code like USD, JPY or BTC')
  .meta({ enum: [...currencyTable().codes] });

// The patterns make the rule visible in /openapi.json (every string they accept parses as a URL);
// the refinement stays as a belt.
const httpUrl = z
  .string()
  .max(2048)
  .regex(new RegExp(HTTP_URL_PATTERN), 'must be an http(s) URL')
  .refine((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'must be an http(s) URL');
const httpBaseUrl = z
  .string()
  .max(2048)
  .regex(new RegExp(HTTP_BASE_URL_PATTERN), 'must be an http(s) URL without query or fragment')
  .refine((s) => URL.canParse(s), 'must be an http(s) URL');

/** Body of POST /games/request-access (docs/contract.md "Game access sessions"). */
export const requestAccessBody = z
  .object({
    game: text(64),
    user_id: text(128),
    username: text(128),
    avatar_url: httpUrl.optional(),
    lang: z
      .string()
      .max(LANG_MAX)
      .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a language tag like "en" or "pt-BR"')
      .optional(),
    currency: currencyCode.default('USD'),
    balance: money(true).optional(),
    extra_data: z.string().max(4096).regex(TEXT_RE, 'must not contain NUL').optional(),
    demo: z.boolean().default(false),
    demo_session: z.boolean().default(false),
    expires_in_minutes: z
      .number()
      .int()
      .min(EXPIRES_IN_MINUTES.min)
      .max(EXPIRES_IN_MINUTES.max)
      .default(EXPIRES_IN_MINUTES.default),
  })
  .strict();
export type RequestAccessBody = z.infer<typeof requestAccessBody>;

const path = z
  .string()
  .max(256)
  .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'must be an absolute path like /wallet/bet');

/** An operator's answer code (answer_table lists). */
const CODE_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Body of POST /admin/operators. Defaults: the sandbox's paths, 10 s timeout, the saga's published
 * retry schedule, the `seed` answer table, lost bets closed with a zero-amount win.
 */
/** retry_policy: a schedule or the exponential shape (rules/retry/schedule.ts). */
const retryPolicy = z.union([
  z
    .object({
      delaysMs: z.array(z.number().int().min(0).max(172_800_000)).max(100),
      jitter: z.number().min(0).max(1).optional(),
    })
    .strict(),
  z
    .object({
      retries: z.number().int().min(0).max(100).default(10),
      minTimeoutMs: z.number().int().min(1).max(172_800_000).default(500),
      maxTimeoutMs: z.number().int().min(1).max(172_800_000).default(60_000),
      factor: z.number().min(1).max(10).default(2),
    })
    .strict()
    .refine((p) => p.maxTimeoutMs >= p.minTimeoutMs, 'maxTimeoutMs must be >= minTimeoutMs'),
]);
/** How the operator's answers count (rules/wallet/answers.ts): a preset, or a preset with codes. */
const answerTableInput = z.union([
  z.enum(ANSWER_PRESETS),
  z
    .object({
      preset: z.enum(ANSWER_PRESETS),
      refusals: z.record(z.string().regex(CODE_RE).max(64), z.enum(REFUSAL_CODES)).optional(),
      duplicates: z.array(z.string().regex(CODE_RE).max(64)).max(100).optional(),
      mismatches: z.array(z.string().regex(CODE_RE).max(64)).max(100).optional(),
      unknownTransaction: z.array(z.string().regex(CODE_RE).max(64)).max(100).optional(),
      okStatuses: z.array(z.string().regex(CODE_RE).max(64)).max(100).optional(),
    })
    .strict(),
]);
const timeoutMs = z.number().int().min(100).max(60_000);
const roundEndRule = {
  message: 'round_end_path is required when round_close is round-end',
  path: ['round_end_path'],
};

export const createOperatorBody = z
  .object({
    name: text(128),
    callback_form: z.enum(['A', 'B']),
    base_url: httpBaseUrl,
    bet_path: path.default('/wallet/bet'),
    win_path: path.default('/wallet/win'),
    balance_path: path.default('/wallet/balance'),
    rollback_path: path.default('/wallet/rollback'),
    timeout_ms: timeoutMs.default(10_000),
    // The saga's published schedule (rules/retry/schedule.ts, docs/decisions/retries/0001-retries-for-a-day.md).
    retry_policy: retryPolicy.default({
      ...DEFAULT_RETRY_SCHEDULE,
      delaysMs: [...DEFAULT_RETRY_SCHEDULE.delaysMs],
    }),
    answer_table: answerTableInput.default('seed'),
    round_close: z.enum(ROUND_CLOSE_MODES).default('zero-win'),
    round_end_path: path.optional(),
    // Callback `amount` as a decimal string in the currency's precision, or a JSON number (docs/contract.md "Operator callbacks").
    amount_format: z.enum(['string', 'number']).default('string'),
  })
  .strict()
  .refine((b) => b.round_close !== 'round-end' || b.round_end_path !== undefined, roundEndRule);
export type CreateOperatorBody = z.infer<typeof createOperatorBody>;

/**
 * Body of PATCH /admin/operators/:id: any of the callback settings, each replacing
 * the stored one; at least one. The readiness probe runs again after the change.
 */
export const updateOperatorBody = z
  .object({
    name: text(128).optional(),
    callback_form: z.enum(['A', 'B']).optional(),
    base_url: httpBaseUrl.optional(),
    bet_path: path.optional(),
    win_path: path.optional(),
    balance_path: path.optional(),
    rollback_path: path.optional(),
    timeout_ms: timeoutMs.optional(),
    retry_policy: retryPolicy.optional(),
    answer_table: answerTableInput.optional(),
    round_close: z.enum(ROUND_CLOSE_MODES).optional(),
    round_end_path: path.nullable().optional(),
    amount_format: z.enum(['string', 'number']).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change', path: [] });
export type UpdateOperatorBody = z.infer<typeof updateOperatorBody>;

/** Body of POST /play/open. */
export const openBody = z.object({ launch: text(128) }).strict();

/** A round id as a JSON integer or a decimal string (the page sends strings). */
const roundIdInput = z
  .union([z.number(), z.string().regex(/^\d{1,16}$/, 'must be a decimal integer')])
  .transform((v) => Number(v))
  .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER));

/** Body of POST /play/bets; `selection` is checked against the session's game by bets.ts. */
export const betBody = z
  .object({
    amount: money(false).optional(),
    round_id: roundIdInput.optional(),
    selection: z.record(z.string(), z.unknown()),
    free: z.boolean().default(false),
  })
  .strict()
  .refine((b) => b.free || b.amount !== undefined, { message: 'amount is required', path: ['amount'] });
export type BetBody = z.infer<typeof betBody>;

/** Body of POST /games/free-bets (Redeem Free Bet). */
export const freeBetBody = z
  .object({
    game_slug: text(64),
    user_id: text(128),
    quantity: z.number().int().min(1).max(10_000),
    value: money(false),
    currency: currencyCode,
    expires_at: z.iso.datetime({ offset: true }),
    bonus_code: text(64).optional(),
  })
  .strict();
export type FreeBetBody = z.infer<typeof freeBetBody>;

/** `^` 1..max `$` for a power of ten `max`, e.g. 100 → `^(?:[1-9][0-9]{0,1}|100)$` (exact in /openapi.json). */
const oneTo = (max: number) => new RegExp(`^(?:[1-9][0-9]{0,${String(max).length - 2}}|${max})$`);

const pageInt = (max: number, def: number) =>
  z
    .string()
    .regex(oneTo(max), `must be an integer from 1 to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(1).max(max))
    .default(def);

/** Query of GET /sessions/:sessionId/transactions: pageSize 1..100 (20), pageNumber from 1 (1). */
export const pageQuery = z.object({ pageSize: pageInt(100, 20), pageNumber: pageInt(100_000, 1) });

/**
 * Parses `value` with `schema`.
 * @throws InvalidInputError (400) naming the first offending field and rule.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value ?? undefined);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : what;
  // Unknown fields are named as the app's ajv names them (services/api/input-policy.ts).
  if (issue?.code === 'unrecognized_keys')
    throw new InvalidInputError(
      'INVALID_INPUT',
      `${[...issue.path, issue.keys[0]].join('.')}: unknown field`,
    );
  throw new InvalidInputError('INVALID_INPUT', `${where}: ${issue?.message ?? 'invalid'}`);
}

/** The JSON schema of `schema` for a route's OpenAPI description (input side, OpenAPI 3.0). */
export function docSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}
