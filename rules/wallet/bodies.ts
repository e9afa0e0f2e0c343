/**
 * The callback wire contract (notes/issue5-contract.md "Callback wire contract"; seed 001
 * "Implemented by the operator"), pure: which method, URL, body and webhook-id a callback job
 * gets, and how an operator's answer is classified. No I/O, no clock.
 *
 * Form A: POST JSON to the operator's own paths, ids as JSON integers. Form B: wins and rollbacks
 * are GET with a JSON body on the fixed paths /webhooks/platform/rewards and
 * /webhooks/platform/rollback, provider_tx_id (and linked_tx_id) as strings (seed: "integer in
 * the win callback; string in rewards and rollback"). Register Bet is POST on bet_path in both
 * forms. Amounts are JSON numbers in major units (1250 minor → 12.5).
 */

import { toMajorNumber } from '../money/money.ts';
import type { RetryPolicy } from '../retry/schedule.ts';
import type { BetContext } from './events.ts';

/** `provider` of every callback and `agreggator` (seed spelling) of the form A win. */
export const PROVIDER = 'casino-platform';
export const FORM_B_REWARDS_PATH = '/webhooks/platform/rewards';
export const FORM_B_ROLLBACK_PATH = '/webhooks/platform/rollback';

/** One operator's callback configuration (a row of `operators`). */
export interface OperatorConfig {
  readonly operatorId: string;
  readonly form: 'A' | 'B';
  /** Origin (and optional path prefix) without a trailing slash. */
  readonly baseUrl: string;
  readonly betPath: string;
  readonly winPath: string;
  readonly rollbackPath: string;
  /** Standard Webhooks secret, `whsec_` + base64. */
  readonly signingSecret: string;
  /** Per-request timeout, ms. */
  readonly timeoutMs: number;
  readonly retryPolicy: RetryPolicy;
}

export type CallbackKind = 'bet' | 'win' | 'rollback';

/** A callback the saga must make, planned from one event (see plan.ts). */
export interface CallbackJob {
  readonly kind: CallbackKind;
  /** provider_tx_id of this callback's transaction (the idempotency key). */
  readonly txId: number;
  /** The bet's provider_tx_id. */
  readonly betTxId: number;
  /** Minor units: the stake (bet, rollback) or the payout (win). */
  readonly amountMinor: number;
  readonly bet: BetContext;
}

/** What the session adds to every callback. */
export interface SessionInfo {
  readonly sessionToken: string;
  readonly extraData: string | null;
}

/** A fully built callback request (signing happens at send time, per attempt). */
export interface CallbackRequest {
  readonly method: 'POST' | 'GET';
  readonly url: string;
  /** `<kind>-<provider_tx_id>`: the same on every retry (Standard Webhooks idempotency). */
  readonly webhookId: string;
  readonly body: Record<string, unknown>;
}

/** The method, URL, webhook-id and exact body of `job` for `operator`. */
export function buildRequest(job: CallbackJob, op: OperatorConfig, session: SessionInfo): CallbackRequest {
  const b = job.bet;
  const common = {
    user_id: b.user_id,
    currency: b.currency,
    amount: toMajorNumber(job.amountMinor),
    provider: PROVIDER,
  };
  const round = String(b.round_id);
  const webhookId = `${job.kind}-${job.txId}`;
  // baseUrl comes without a trailing slash (OperatorConfig; directory.ts strips it once per row).
  const url = (path: string) => `${op.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
  if (job.kind === 'bet') {
    const body = {
      ...common,
      provider_tx_id: job.txId,
      game: b.game,
      action: 'bet',
      round_id: round,
      mode: b.mode,
      count_register: b.count_register,
      session_token: session.sessionToken,
      bonus_code: b.bonus_code,
      extra_data: session.extraData,
    };
    return { method: 'POST', url: url(op.betPath), webhookId, body };
  }
  if (job.kind === 'win' && op.form === 'A') {
    const body = {
      ...common,
      provider_tx_id: job.txId,
      game: b.game,
      action: 'win',
      round_id: round,
      count_register: b.count_register,
      session_token: session.sessionToken,
      linked_tx_id: job.betTxId,
      mode: b.mode,
      agreggator: PROVIDER,
      bonus_code: b.bonus_code,
    };
    return { method: 'POST', url: url(op.winPath), webhookId, body };
  }
  if (job.kind === 'win') {
    const body = {
      ...common,
      provider_tx_id: String(job.txId),
      game: b.game,
      action: 'win',
      round_id: round,
      mode: b.mode,
      count_register: b.count_register,
      session_token: session.sessionToken,
    };
    return { method: 'GET', url: url(FORM_B_REWARDS_PATH), webhookId, body };
  }
  const a = op.form === 'A';
  const body = {
    ...common,
    provider_tx_id: a ? job.txId : String(job.txId),
    linked_tx_id: a ? job.betTxId : String(job.betTxId),
    game: b.game,
    action: 'rollback',
    round_id: round,
    mode: b.mode,
    count_register: b.count_register,
    session_token: session.sessionToken,
  };
  return a
    ? { method: 'POST', url: url(op.rollbackPath), webhookId, body }
    : { method: 'GET', url: url(FORM_B_ROLLBACK_PATH), webhookId, body };
}

/** The operator's acknowledgement. */
export interface Ack {
  readonly operatorTxId: string;
  readonly oldBalance: string;
  readonly newBalance: string;
}

/**
 * How an answer counts:
 * - ok: acknowledged (money moved, or a replay of the first answer);
 * - refused: a definite "no" (a 4xx other than 401/404/408/429): retrying cannot change it;
 * - failed: anything else (5xx, 401/404/408/429, timeout, connection error, malformed JSON,
 *   missing fields): the outcome at the operator is unknown, so it is retried or compensated.
 */
export type Verdict =
  | { readonly type: 'ok'; readonly ack: Ack }
  | { readonly type: 'refused'; readonly status: number; readonly code: string; readonly reason: string }
  | { readonly type: 'failed'; readonly code: 'TIMEOUT' | 'OPERATOR_ERROR'; readonly reason: string };

const UNCERTAIN_4XX = new Set([401, 404, 408, 429]);
const BALANCE = /^-?\d{1,15}(\.\d{1,8})?$/;

function text(v: unknown): string | undefined {
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * Classifies an HTTP answer to `req`. A 2xx must be a JSON object with operator_tx_id and both
 * balances as decimal strings; form B and every rollback answer also echo user_id, currency,
 * provider and provider_tx_id, which must match the request (contract).
 */
export function classifyResponse(req: CallbackRequest, status: number, bodyText: string): Verdict {
  let json: unknown;
  try {
    json = bodyText.length > 0 ? JSON.parse(bodyText) : undefined;
  } catch {
    json = undefined;
  }
  const obj =
    json !== null && typeof json === 'object' && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : {};
  if (status >= 200 && status < 300) {
    if (json === undefined)
      return { type: 'failed', code: 'OPERATOR_ERROR', reason: `HTTP ${status}: malformed JSON` };
    const operatorTxId = text(obj.operator_tx_id);
    const oldBalance = obj.old_balance;
    const newBalance = obj.new_balance;
    if (operatorTxId === undefined || typeof oldBalance !== 'string' || typeof newBalance !== 'string')
      return {
        type: 'failed',
        code: 'OPERATOR_ERROR',
        reason: `HTTP ${status}: missing operator_tx_id or balances`,
      };
    if (!BALANCE.test(oldBalance) || !BALANCE.test(newBalance))
      return {
        type: 'failed',
        code: 'OPERATOR_ERROR',
        reason: `HTTP ${status}: balances are not decimal strings`,
      };
    const echoes = req.method === 'GET' || req.body.action === 'rollback';
    if (echoes) {
      for (const f of ['user_id', 'currency', 'provider', 'provider_tx_id'] as const) {
        if (text(obj[f]) !== String(req.body[f]))
          return {
            type: 'failed',
            code: 'OPERATOR_ERROR',
            reason: `HTTP ${status}: ${f} missing or not echoed`,
          };
      }
    }
    return { type: 'ok', ack: { operatorTxId, oldBalance, newBalance } };
  }
  const err = obj.error as Record<string, unknown> | undefined;
  const code = typeof err?.code === 'string' ? err.code : `HTTP_${status}`;
  const message = typeof err?.message === 'string' ? err.message : bodyText.slice(0, 200);
  if (status >= 400 && status < 500 && !UNCERTAIN_4XX.has(status))
    return { type: 'refused', status, code, reason: `HTTP ${status} ${code}: ${message}` };
  return { type: 'failed', code: 'OPERATOR_ERROR', reason: `HTTP ${status} ${code}: ${message}` };
}
