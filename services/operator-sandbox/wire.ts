/**
 * The callback wire format the sandbox accepts (issue-5 contract "Callback wire contract", docs/contract.md "Operator callbacks"
 * "Callback request fields"): request validation into one normalised `Movement`, the body hash that
 * tells a replay from a conflicting reuse of a provider_tx_id, and the response shapes. Pure.
 *
 * Money: `currency` must be one of the table's (ISO 4217 with a minor unit, or a
 * configured crypto code); `amount` is a decimal string or a JSON number in major units with at most
 * that currency's exponent of digits after the point ("12.50" or 12.5 USD, "1250" JPY, "0.00000001"
 * BTC). Balances are answered as decimal strings with exactly the exponent's digits.
 *
 * Free bets: a bet of mode "free" registers a free bet, a bet that moves no money: its
 * amount is 0 (a real-money bet's is above 0), with its bonus_code and free_bet_id. Form B's
 * Rollback Bet has "the same fields as Register Earnings" (docs/contract.md "Operator callbacks"): no linked_tx_id, the bet is
 * found by the player's round as for a form-B win; one that still sends linked_tx_id is taken.
 * These shapes are lenient (unknown fields are ignored); the strict mode checks the exact ones of
 * schemas/callbacks first (checkExact).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type CallbackSchemas, requestSchemaOf } from '../../lib/http/callback-schemas.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import { SandboxError } from './errors.ts';

export type MoneyKind = 'bet' | 'win' | 'rollback';
export type CallbackKind = MoneyKind | 'balance';
/** A: POST on operator-chosen paths; B: GET with a JSON body on /webhooks/platform/* (docs/contract.md "Operator callbacks"). */
export type Form = 'A' | 'B';

const text = z.string().min(1).max(256);
/** Checked against the currency table after the shape (parseMovement, parseBalance). */
const currency = z.string().min(1).max(16);
/** Form A ids are JSON integers (seed: "integer in the win callback"); platform ids stay < 2^53. */
const intId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Form B ids are strings (seed: "string in rewards and rollback"). */
const strId = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a non-empty id of letters, digits, _ . : -');
/** A JSON number or a decimal string; its precision is the currency's (minorOf). */
const amount = z.union([z.number(), z.string().max(64)], {
  error: 'a decimal string or a JSON number in major units',
});

const common = { user_id: text, currency, session_token: text };
const money = {
  ...common,
  amount,
  provider: text,
  game: text,
  round_id: text,
  mode: z.enum(['default', 'free']),
  count_register: z.number().int().min(0),
};

const SCHEMAS = {
  bet: z.object({
    ...money,
    provider_tx_id: intId,
    action: z.literal('bet'),
    bonus_code: z.string().nullish(),
    free_bet_id: z.string().nullish(),
    extra_data: z.string().nullish(),
  }),
  winA: z.object({
    ...money,
    provider_tx_id: intId,
    linked_tx_id: intId,
    action: z.literal('win'),
    agreggator: text,
    bonus_code: z.string().nullish(),
  }),
  winB: z.object({ ...money, provider_tx_id: strId, action: z.literal('win') }),
  rollbackA: z.object({
    ...money,
    provider_tx_id: intId,
    linked_tx_id: intId,
    action: z.literal('rollback'),
  }),
  rollbackB: z.object({
    ...money,
    provider_tx_id: strId,
    linked_tx_id: strId.optional(),
    action: z.literal('rollback'),
  }),
  balance: z.object(common),
} as const;

/** A validated money callback. Ids are strings whatever the form, so both forms meet in one ledger. */
export interface Movement {
  readonly kind: MoneyKind;
  readonly form: Form;
  readonly userId: string;
  readonly currency: string;
  readonly amountMinor: number;
  readonly providerTxId: string;
  /**
   * The bet a win (form A) or rollback names; null for a bet, a form-B win and a form-B rollback
   * without linked_tx_id (linked by the player's round).
   */
  readonly linkedTxId: string | null;
  readonly provider: string;
  readonly game: string;
  readonly roundId: string;
  /** `free`: a free bet's registration (amount 0), or the win or rollback of a free bet. */
  readonly mode: 'default' | 'free';
  readonly bodyHash: string;
}

export interface BalanceRequest {
  readonly userId: string;
  readonly currency: string;
  readonly sessionToken: string;
}

/** Parses a raw (string) body as JSON. @throws SandboxError BAD_REQUEST when it is not valid JSON. */
export function parseJson(raw: unknown): unknown {
  try {
    return JSON.parse(typeof raw === 'string' ? raw : '');
  } catch {
    throw new SandboxError('BAD_REQUEST', 'body is not valid JSON');
  }
}

/** Parses a raw body as JSON. @throws SandboxError BAD_REQUEST when it is not a JSON object. */
export function parseJsonObject(raw: unknown): Record<string, unknown> {
  const v = parseJson(raw);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new SandboxError('BAD_REQUEST', 'body must be a JSON object');
  }
  return v as Record<string, unknown>;
}

/**
 * Validates `body` with `schema`.
 * @throws SandboxError BAD_REQUEST `invalid <what>: <path>: <rule>; …` naming every offending field.
 */
export function check<S extends z.ZodType>(schema: S, body: unknown, what = 'callback body'): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
  throw new SandboxError('BAD_REQUEST', `invalid ${what}: ${lines.join('; ')}`);
}

/** JSON with object keys sorted at every level, so key order never makes a replay look different. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** SHA-256 hex of the canonical JSON of a request body: equal for a replay, different for a conflict. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

const badField = (field: string, rule: string) =>
  new SandboxError('BAD_REQUEST', `invalid callback body: ${field}: ${rule}`);

/** @throws SandboxError BAD_REQUEST when `code` is not in `currencies`. */
function knownCurrency(currencies: Currencies, code: string): string {
  if (!currencies.isCurrency(code))
    throw badField(
      'currency',
      'a supported currency code (ISO 4217 with a minor unit, or a configured crypto code)',
    );
  return code;
}

/**
 * `amount` of a callback in minor units of `code`.
 * @throws SandboxError BAD_REQUEST naming the currency's precision when it does not parse.
 */
function minorOf(currencies: Currencies, amount: number | string, code: string): number {
  const minor = currencies.parseAmount(amount, code);
  if (minor === undefined) {
    const e = currencies.exponentOf(code);
    throw badField(
      'amount',
      `a finite non-negative amount in major units with at most ${e} decimal${e === 1 ? '' : 's'} (${code})`,
    );
  }
  return minor;
}

/**
 * Validates a money callback body of `kind` in `form`; the amount is read in the precision of the
 * body's currency in `currencies`. The body hash is taken with the amount in minor units, so
 * "12.50" and 12.5 are one replay.
 * @throws SandboxError BAD_REQUEST naming every missing or malformed field, an unknown currency, or
 *   an amount out of the currency's precision.
 */
export function parseMovement(
  kind: MoneyKind,
  form: Form,
  body: Record<string, unknown>,
  currencies: Currencies,
): Movement {
  const b =
    kind === 'bet'
      ? check(SCHEMAS.bet, body)
      : kind === 'win'
        ? check(form === 'A' ? SCHEMAS.winA : SCHEMAS.winB, body)
        : check(form === 'A' ? SCHEMAS.rollbackA : SCHEMAS.rollbackB, body);
  const amountMinor = minorOf(currencies, b.amount, knownCurrency(currencies, b.currency));
  // A win of 0 is the round close of a lost bet (form A's zero-amount win, form
  // B's rewards call), so only a real-money bet must move money, and a free bet none.
  if (kind === 'bet' && b.mode === 'default' && amountMinor === 0)
    throw new SandboxError('BAD_REQUEST', `${kind} amount must be > 0`);
  if (kind === 'bet' && b.mode === 'free' && amountMinor !== 0)
    throw new SandboxError('BAD_REQUEST', 'a free bet moves no money: its amount must be 0');
  return {
    kind,
    form,
    userId: b.user_id,
    currency: b.currency,
    amountMinor,
    providerTxId: String(b.provider_tx_id),
    linkedTxId: 'linked_tx_id' in b && b.linked_tx_id !== undefined ? String(b.linked_tx_id) : null,
    provider: b.provider,
    game: b.game,
    roundId: b.round_id,
    mode: 'mode' in b && b.mode === 'free' ? 'free' : 'default',
    bodyHash: bodyHash({ ...body, amount: amountMinor }),
  };
}

/**
 * The strict mode's check (mode.ts): `body` is exactly the request of `kind` in `form`
 * (schemas/callbacks), no field more or less.
 * @throws SandboxError BAD_REQUEST naming every problem, an unknown field by name.
 */
export function checkExact(
  schemas: CallbackSchemas,
  kind: CallbackKind,
  form: Form,
  body: Record<string, unknown>,
): void {
  const problems = schemas.request(requestSchemaOf(kind, form), body);
  if (problems.length > 0)
    throw new SandboxError('BAD_REQUEST', `invalid callback body: ${problems.join('; ')}`);
}

/** Validates a balance callback body. @throws SandboxError BAD_REQUEST (also for a currency not in `currencies`). */
export function parseBalance(body: Record<string, unknown>, currencies: Currencies): BalanceRequest {
  const b = check(SCHEMAS.balance, body);
  return {
    userId: b.user_id,
    currency: knownCurrency(currencies, b.currency),
    sessionToken: b.session_token,
  };
}

/**
 * The 200 answer to a money callback: bet and form-A win carry operator_tx_id, new_balance and
 * old_balance; form-B rewards and rollback (both forms, contract) echo user_id, currency, provider
 * and provider_tx_id too. All values are strings (docs/contract.md "Callback response fields"); balances
 * are decimal strings with the exponent's digits of the movement's currency ("87.50" USD, "8750" JPY).
 */
export function movementResponse(
  m: Movement,
  operatorTxId: string,
  oldMinor: number,
  newMinor: number,
  currencies: Currencies,
): Record<string, string> {
  const base = {
    operator_tx_id: operatorTxId,
    new_balance: currencies.formatMinor(newMinor, m.currency),
    old_balance: currencies.formatMinor(oldMinor, m.currency),
  };
  if (m.kind === 'bet' || (m.kind === 'win' && m.form === 'A')) return base;
  return {
    ...base,
    user_id: m.userId,
    currency: m.currency,
    provider: m.provider,
    provider_tx_id: m.providerTxId,
  };
}

/** The 200 answer to a balance callback: `balance` a decimal string in the currency's precision. */
export function balanceResponse(
  r: BalanceRequest,
  balanceMinor: number,
  currencies: Currencies,
): Record<string, string> {
  return {
    user_id: r.userId,
    currency: r.currency,
    balance: currencies.formatMinor(balanceMinor, r.currency),
    platform_session_token: r.sessionToken,
  };
}
