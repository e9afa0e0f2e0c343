/**
 * The table of operator answers (docs/architecture.md "Money rules"; docs/decisions/wallet-answers/0001-answer-table.md), pure: how one HTTP answer to a callback counts, per operator preset.
 * No I/O, no clock.
 *
 * Classes of an answer:
 * - `ok`: acknowledged; money moved, or a replay of the first answer (operator_tx_id and both
 *   balances present).
 * - `duplicate`: the operator says it already booked this transaction id. Taken as the first
 *   answer when it matches (balances when it gives them; an `amount` it echoes must equal ours).
 * - `mismatch`: the id is booked with another amount or body (a duplicate that does not match,
 *   the sandbox's IDEMPOTENCY_CONFLICT): parked for ops with both bodies, never guessed.
 * - `refused`: a definite "no" that moves no money (insufficient funds, limit reached, player
 *   blocked or self-excluded, session expired, bet already rolled back): a bet is rejected with no
 *   rollback (Hub88: "roll back after any unsuccessful answer except insufficient funds and limit
 *   reached").
 * - `unknown_transaction`: the operator has no such transaction. A rollback answered so is
 *   complete (nothing to refund); on any other callback it counts as `failed`.
 * - `failed`: anything else (other 4xx, 5xx, timeout, connection error, malformed body, a 2xx
 *   without operator_tx_id or balances): the outcome is unknown. A bet is rolled back; a win,
 *   rollback or round close is retried on the schedule.
 *
 * Presets (an operator's `answer_table`, with optional overrides of the code lists):
 * - `seed`: the seed's statuses (001 "Callback statuses listed: 200 success, 401, 404, 500"):
 *   only 200 with the acknowledgement fields is success; a refusal is read from the error body's
 *   `error.code` (or `code`) on a 200 without operator_tx_id (a refusal in words, the seed listing
 *   no 4xx) or on any 4xx; 401, 404 and 500 without a known code are failures.
 * - `http-status`: any 2xx is success; statuses alone also classify (402 insufficient funds, 403
 *   player blocked, 409 with DUPLICATE_TRANSACTION a duplicate), codes in the body take precedence.
 * - `status-in-body` (Hub88's form): HTTP 200 with a `status` field; `RS_OK` (or `OK`) is
 *   success, `RS_ERROR_*` statuses map by the table below; a refusal carries no operator_tx_id.
 *   Any non-200 HTTP status is a failure.
 */

import { RulesError } from '../errors.ts';

/** A refusal that moved no money, in our words (BetRejected.code). */
export type RefusalCode =
  | 'INSUFFICIENT_FUNDS'
  | 'LIMIT_REACHED'
  | 'PLAYER_BLOCKED'
  | 'SELF_EXCLUDED'
  | 'SESSION_EXPIRED'
  | 'BET_ROLLED_BACK'
  | 'OPERATOR_REFUSED';

export type AnswerClass = 'ok' | 'duplicate' | 'mismatch' | 'refused' | 'unknown_transaction' | 'failed';

export type AnswerPreset = 'seed' | 'http-status' | 'status-in-body';
export const ANSWER_PRESETS = [
  'seed',
  'http-status',
  'status-in-body',
] as const satisfies readonly AnswerPreset[];

/** The operator's acknowledgement. Balances are decimal strings; null when a duplicate gave none. */
export interface Ack {
  readonly operatorTxId: string;
  readonly oldBalance: string | null;
  readonly newBalance: string | null;
}

/** How one answer counts. `code` is ours for refusals, the operator's (or HTTP_<status>) otherwise. */
export type Answer =
  | { readonly class: 'ok' | 'duplicate'; readonly ack: Ack }
  | {
      readonly class: 'mismatch' | 'unknown_transaction';
      readonly code: string;
      readonly reason: string;
    }
  | { readonly class: 'refused'; readonly code: RefusalCode; readonly reason: string }
  | {
      readonly class: 'failed';
      readonly code: 'TIMEOUT' | 'OPERATOR_ERROR';
      readonly reason: string;
    };

/** One operator's reading of answers: a preset and its code lists (operator code → class). */
export interface AnswerTable {
  readonly preset: AnswerPreset;
  /** Operator codes that are refusals, with the refusal each one means. */
  readonly refusals: Readonly<Record<string, RefusalCode>>;
  readonly duplicates: readonly string[];
  readonly mismatches: readonly string[];
  readonly unknownTransaction: readonly string[];
  /** status-in-body: the values of `status` that mean success. */
  readonly okStatuses: readonly string[];
}

/** Codes every preset knows (the sandbox's, the issue-5 contract's and common aggregator words). */
const COMMON_REFUSALS: Record<string, RefusalCode> = {
  INSUFFICIENT_FUNDS: 'INSUFFICIENT_FUNDS',
  NOT_ENOUGH_MONEY: 'INSUFFICIENT_FUNDS',
  LIMIT_REACHED: 'LIMIT_REACHED',
  BET_LIMIT_REACHED: 'LIMIT_REACHED',
  PLAYER_BLOCKED: 'PLAYER_BLOCKED',
  USER_DISABLED: 'PLAYER_BLOCKED',
  SELF_EXCLUDED: 'SELF_EXCLUDED',
  SESSION_EXPIRED: 'SESSION_EXPIRED',
  TOKEN_EXPIRED: 'SESSION_EXPIRED',
  BET_ROLLED_BACK: 'BET_ROLLED_BACK',
  // A rollback of a bet already settled (the sandbox's answer; the saga never asks one).
  BET_SETTLED: 'OPERATOR_REFUSED',
};
const COMMON_DUPLICATES = ['DUPLICATE_TRANSACTION'];
const COMMON_MISMATCHES = ['IDEMPOTENCY_CONFLICT'];
const COMMON_UNKNOWN = ['UNKNOWN_TRANSACTION', 'TRANSACTION_NOT_FOUND', 'BET_NOT_FOUND'];

/** Hub88's seamless-wallet statuses (docs.hub88.io "Seamless Wallet response statuses"). */
const HUB88_REFUSALS: Record<string, RefusalCode> = {
  RS_ERROR_NOT_ENOUGH_MONEY: 'INSUFFICIENT_FUNDS',
  RS_ERROR_LIMIT_REACHED: 'LIMIT_REACHED',
  RS_ERROR_USER_DISABLED: 'PLAYER_BLOCKED',
  RS_ERROR_TOKEN_EXPIRED: 'SESSION_EXPIRED',
};

const PRESETS: Record<AnswerPreset, AnswerTable> = {
  seed: {
    preset: 'seed',
    refusals: COMMON_REFUSALS,
    duplicates: COMMON_DUPLICATES,
    mismatches: COMMON_MISMATCHES,
    unknownTransaction: COMMON_UNKNOWN,
    okStatuses: [],
  },
  'http-status': {
    preset: 'http-status',
    refusals: COMMON_REFUSALS,
    duplicates: COMMON_DUPLICATES,
    mismatches: COMMON_MISMATCHES,
    unknownTransaction: COMMON_UNKNOWN,
    okStatuses: [],
  },
  'status-in-body': {
    preset: 'status-in-body',
    refusals: { ...COMMON_REFUSALS, ...HUB88_REFUSALS },
    duplicates: [...COMMON_DUPLICATES, 'RS_ERROR_DUPLICATE_TRANSACTION'],
    mismatches: COMMON_MISMATCHES,
    unknownTransaction: [...COMMON_UNKNOWN, 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST'],
    okStatuses: ['RS_OK', 'OK'],
  },
};

/** A stored answer_table that cannot be used. */
export class AnswerTableError extends RulesError {
  declare readonly code: 'ANSWER_TABLE_INVALID';

  constructor(message: string) {
    super('ANSWER_TABLE_INVALID', message);
  }
}

/** Every refusal code, in the order the docs list them. */
export const REFUSAL_CODES = [
  'INSUFFICIENT_FUNDS',
  'LIMIT_REACHED',
  'PLAYER_BLOCKED',
  'SELF_EXCLUDED',
  'SESSION_EXPIRED',
  'BET_ROLLED_BACK',
  'OPERATOR_REFUSED',
] as const satisfies readonly RefusalCode[];
const REFUSALS = new Set<string>(REFUSAL_CODES);
const CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

function codeList(raw: unknown, field: string): string[] {
  if (!Array.isArray(raw) || raw.length > 100 || !raw.every((c) => typeof c === 'string' && CODE.test(c)))
    throw new AnswerTableError(`answer_table.${field} must be a list of at most 100 codes`);
  return raw as string[];
}

/**
 * The table of a preset, or of an operator's stored `answer_table` (jsonb, parsed):
 * `{ preset, refusals?, duplicates?, mismatches?, unknownTransaction?, okStatuses? }`; lists given
 * are added to the preset's, so an operator only names its own codes. null/undefined → `seed`.
 * @throws AnswerTableError naming the offending field.
 */
export function answerTable(raw: unknown = 'seed'): AnswerTable {
  if (raw === null || raw === undefined) return PRESETS.seed;
  if (typeof raw === 'string') {
    if (!(ANSWER_PRESETS as readonly string[]).includes(raw))
      throw new AnswerTableError(`answer_table preset must be one of ${ANSWER_PRESETS.join(', ')}`);
    return PRESETS[raw as AnswerPreset];
  }
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new AnswerTableError('answer_table must be a preset name or an object');
  const src = raw as Record<string, unknown>;
  for (const k of Object.keys(src))
    if (!['preset', 'refusals', 'duplicates', 'mismatches', 'unknownTransaction', 'okStatuses'].includes(k))
      throw new AnswerTableError(`answer_table.${k} is not a known field`);
  const base = answerTable(src.preset ?? 'seed');
  const refusals: Record<string, RefusalCode> = { ...base.refusals };
  if (src.refusals !== undefined) {
    if (typeof src.refusals !== 'object' || src.refusals === null || Array.isArray(src.refusals))
      throw new AnswerTableError('answer_table.refusals must map operator codes to refusal codes');
    for (const [k, v] of Object.entries(src.refusals)) {
      if (!CODE.test(k) || typeof v !== 'string' || !REFUSALS.has(v))
        throw new AnswerTableError(`answer_table.refusals.${k} must be one of ${REFUSAL_CODES.join(', ')}`);
      refusals[k] = v as RefusalCode;
    }
  }
  const more = (f: 'duplicates' | 'mismatches' | 'unknownTransaction' | 'okStatuses') =>
    src[f] === undefined ? base[f] : [...base[f], ...codeList(src[f], f)];
  return Object.freeze({
    preset: base.preset,
    refusals,
    duplicates: more('duplicates'),
    mismatches: more('mismatches'),
    unknownTransaction: more('unknownTransaction'),
    okStatuses: more('okStatuses'),
  });
}

/** What classify needs to know of the request. */
export interface AnsweredRequest {
  readonly kind: 'bet' | 'win' | 'rollback' | 'close';
  /** Form B and rollbacks echo identity fields that must match (docs/contract.md "Operator callbacks" response fields). */
  readonly echoes: boolean;
  readonly body: Readonly<Record<string, unknown>>;
}

const BALANCE = /^-?\d{1,19}(\.\d{1,18})?$/;

function text(v: unknown): string | undefined {
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** A decimal string or JSON number as a string, for comparing amounts whatever their form. */
function decimal(v: unknown): string | undefined {
  const t = text(v);
  if (t === undefined || !/^-?\d+(\.\d+)?$/.test(t)) return undefined;
  const [int = '0', frac = ''] = t.replace(/^-/, '').split('.');
  const f = frac.replace(/0+$/, '');
  return `${t.startsWith('-') ? '-' : ''}${int.replace(/^0+(?=\d)/, '')}${f ? `.${f}` : ''}`;
}

function failed(reason: string): Answer {
  return { class: 'failed', code: 'OPERATOR_ERROR', reason };
}

/** The acknowledgement fields of a body, or why they are missing. */
function ackOf(
  req: AnsweredRequest,
  obj: Record<string, unknown>,
  status: number,
  needBalances: boolean,
): Ack | string {
  const operatorTxId = text(obj.operator_tx_id);
  const oldBalance = obj.old_balance;
  const newBalance = obj.new_balance;
  const hasBalances = typeof oldBalance === 'string' && typeof newBalance === 'string';
  if (needBalances && (operatorTxId === undefined || !hasBalances))
    return `HTTP ${status}: missing operator_tx_id or balances`;
  if (hasBalances && (!BALANCE.test(oldBalance) || !BALANCE.test(newBalance)))
    return `HTTP ${status}: balances are not decimal strings`;
  if (needBalances && req.echoes) {
    for (const f of ['user_id', 'currency', 'provider', 'provider_tx_id'] as const)
      if (text(obj[f]) !== String(req.body[f])) return `HTTP ${status}: ${f} missing or not echoed`;
  }
  return {
    operatorTxId: operatorTxId ?? '',
    oldBalance: hasBalances ? oldBalance : null,
    newBalance: hasBalances ? newBalance : null,
  };
}

/** The operator's code of an error answer: `status` (status-in-body), `error.code` or `code`. */
function operatorCode(table: AnswerTable, obj: Record<string, unknown>): string | undefined {
  if (table.preset === 'status-in-body' && typeof obj.status === 'string') return obj.status;
  const err = obj.error;
  if (err !== null && typeof err === 'object' && typeof (err as Record<string, unknown>).code === 'string')
    return (err as Record<string, string>).code;
  if (typeof obj.code === 'string') return obj.code;
  return undefined;
}

function messageOf(obj: Record<string, unknown>, bodyText: string): string {
  const err = obj.error;
  if (err !== null && typeof err === 'object') {
    const m = (err as Record<string, unknown>).message;
    if (typeof m === 'string') return m.slice(0, 200);
  }
  if (typeof obj.message === 'string') return obj.message.slice(0, 200);
  return bodyText.slice(0, 200);
}

/** A duplicate answer: the first answer when it matches (an echoed amount equal to ours), else a mismatch. */
function duplicateOf(
  req: AnsweredRequest,
  obj: Record<string, unknown>,
  status: number,
  code: string,
): Answer {
  if (obj.amount !== undefined && decimal(obj.amount) !== decimal(req.body.amount))
    return {
      class: 'mismatch',
      code,
      reason: `HTTP ${status} ${code}: booked amount ${String(obj.amount)} differs from ${String(req.body.amount)}`,
    };
  const ack = ackOf(req, obj, status, false);
  if (typeof ack === 'string') return { class: 'mismatch', code, reason: ack };
  return { class: 'duplicate', ack };
}

/** JSON.parse reviver: U+0000 in a string value (from a `\\u0000` escape) becomes U+FFFD. */
const withoutNul = (_key: string, v: unknown): unknown =>
  typeof v === 'string' ? v.replaceAll('\u0000', '\uFFFD') : v;

/**
 * Classifies one HTTP answer to `req` under `table`. `status` 0 with `bodyText` as the reason means
 * no answer arrived (connection error); timeouts are classified by the caller as
 * `{class: 'failed', code: 'TIMEOUT'}`.
 * `unknown_transaction` is returned only for rollbacks and round closes (elsewhere it is a failure
 * or, for a win, kept as is so the caller parks it: the operator does not know the bet).
 */
export function classifyAnswer(
  table: AnswerTable,
  req: AnsweredRequest,
  status: number,
  bodyText: string,
): Answer {
  // U+0000, raw or JSON-escaped, becomes U+FFFD in everything read from the body: reasons and
  // acknowledgements end up in Postgres text (the wallet read model), which refuses it.
  const text = bodyText.replaceAll('\u0000', '\uFFFD');
  if (status === 0) return failed(`no answer: ${text.slice(0, 200)}`);
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text, withoutNul) : undefined;
  } catch {
    json = undefined;
  }
  const isObj = json !== null && typeof json === 'object' && !Array.isArray(json);
  const obj = isObj ? (json as Record<string, unknown>) : {};
  const success =
    table.preset === 'seed'
      ? status === 200
      : table.preset === 'http-status'
        ? status < 300 && status >= 200
        : false;
  if (table.preset === 'status-in-body') {
    if (status !== 200) return failed(`HTTP ${status}: ${messageOf(obj, text)}`);
    if (!isObj) return failed(`HTTP ${status}: malformed JSON`);
  } else if (success) {
    if (!isObj) return failed(`HTTP ${status}: malformed JSON`);
    // seed: a 200 naming an error code and no operator_tx_id is a refusal in words (docs/contract.md "Operator callbacks" lists
    // no 4xx: 401, 404 and 500 mean not authorised, no route, failed); read by its code below.
    const inWords =
      table.preset === 'seed' && obj.operator_tx_id === undefined && operatorCode(table, obj) !== undefined;
    if (!inWords) {
      const ack = ackOf(req, obj, status, true);
      return typeof ack === 'string' ? failed(ack) : { class: 'ok', ack };
    }
  }
  const code = operatorCode(table, obj);
  if (table.preset === 'status-in-body' && code !== undefined && table.okStatuses.includes(code)) {
    const ack = ackOf(req, obj, status, true);
    return typeof ack === 'string' ? failed(ack) : { class: 'ok', ack };
  }
  const label = code ?? `HTTP_${status}`;
  const reason = `HTTP ${status} ${label}: ${messageOf(obj, text)}`;
  if (code !== undefined) {
    // Hub88's RS_ERROR_DUPLICATE_TRANSACTION is "the same id with other data" unless it carries the
    // first answer (its operator_tx_id): only then is it the first answer.
    if (code === 'RS_ERROR_DUPLICATE_TRANSACTION' && obj.operator_tx_id === undefined)
      return { class: 'mismatch', code, reason };
    if (table.duplicates.includes(code)) return duplicateOf(req, obj, status, code);
    if (table.mismatches.includes(code)) return { class: 'mismatch', code, reason };
    if (table.unknownTransaction.includes(code))
      return req.kind === 'bet' ? failed(reason) : { class: 'unknown_transaction', code, reason };
    const refusal = table.refusals[code];
    const refusalStatus =
      table.preset === 'status-in-body' ||
      (status >= 400 && status < 500) ||
      (table.preset === 'seed' && status === 200);
    if (refusal !== undefined && refusalStatus) return { class: 'refused', code: refusal, reason };
  }
  if (table.preset === 'http-status') {
    if (status === 402) return { class: 'refused', code: 'INSUFFICIENT_FUNDS', reason };
    if (status === 403) return { class: 'refused', code: 'PLAYER_BLOCKED', reason };
  }
  return failed(reason);
}

/** The answer of a callback that got no answer within its timeout. */
export function timedOut(timeoutMs: number): Answer {
  return { class: 'failed', code: 'TIMEOUT', reason: `no answer within ${timeoutMs} ms` };
}
