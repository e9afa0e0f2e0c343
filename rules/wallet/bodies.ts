/**
 * The callback wire contract (notes/issue5-contract.md "Callback wire contract"; docs/contract.md "Operator callbacks"
 * "Implemented by the operator"), pure: which method, URL, body and webhook-id a callback job
 * gets, and how an operator's answer is classified. No I/O, no clock.
 *
 * Form A: POST JSON to the operator's own paths, ids as JSON integers. Form B: wins and rollbacks
 * are GET with a JSON body on the fixed paths /webhooks/platform/rewards and
 * /webhooks/platform/rollback, provider_tx_id (and linked_tx_id) as strings (seed: "integer in
 * the win callback; string in rewards and rollback"); form B's Rollback Bet has "the same fields as
 * Register Earnings", so no linked_tx_id. Register Bet is POST on bet_path in both forms; a free
 * bet is registered with it as a bet that moves no money (amount 0, mode "free", `free_bet_id`). Amounts are decimal strings in the currency's precision (1250 minor USD → "12.50", 1250
 * JPY → "1250"), or JSON numbers for an operator whose `amountFormat` is `number`
 * (docs/contract.md "Operator callbacks" types `amount` as a number; docs/decisions/money/0007-amounts-on-the-wire.md).
 *
 * A lost bet's round close (per operator `round_close`): `zero-win` sends the
 * form's win (form A Register Win, form B Register Earnings) with amount 0 and the win's tx id
 * (bet + 1); `round-end` POSTs {user_id, currency, provider, provider_tx_id, linked_tx_id, game,
 * action: "round_end", round_id, session_token} to the operator's round_end_path; `none` sends
 * nothing. How answers count is answers.ts's.
 */

import { type AmountFormat, type Currencies, currencyTable } from '../money/currencies.ts';
import type { RetrySchedule } from '../retry/schedule.ts';
import type { AnswerTable } from './answers.ts';
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
  /**
   * The secret a rotation replaced, still signing until `previousSecretValidUntil` (Unix ms);
   * absent or null when none (signing.ts `signingSecretsAt`).
   */
  readonly previousSigningSecret?: string | null;
  readonly previousSecretValidUntil?: number | null;
  /** Per-request timeout, ms. */
  readonly timeoutMs: number;
  /** When a failed win, rollback or round close is tried again, then parked. */
  readonly retrySchedule: RetrySchedule;
  /** How the operator's answers count. */
  readonly answers: AnswerTable;
  /** How a lost bet's round is closed for the operator. */
  readonly roundClose: RoundClose;
  /** Path of the round-end call (roundClose `round-end`), e.g. /wallet/round-end. */
  readonly roundEndPath: string | null;
  /** How `amount` travels: a decimal string (default) or a JSON number. */
  readonly amountFormat: AmountFormat;
}

/** How lost bets close their round at the operator; `zero-win` by default (docs/decisions/wallet-answers/0003-closing-the-round-of-a-lost-bet.md). */
export type RoundClose = 'zero-win' | 'round-end' | 'none';
export const ROUND_CLOSE_MODES: readonly RoundClose[] = ['zero-win', 'round-end', 'none'];

/** What a callback does: debit, credit, refund, or close a lost bet's round. */
export type CallbackKind = 'bet' | 'win' | 'rollback' | 'close';

/** A callback the saga must make, planned from one event (see plan.ts). */
export interface CallbackJob {
  readonly kind: CallbackKind;
  /** provider_tx_id of this callback's transaction (the idempotency key). */
  readonly txId: number;
  /** The bet's provider_tx_id. */
  readonly betTxId: number;
  /** Minor units: the stake (bet, rollback), the payout (win), 0 (close). */
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

/**
 * The URL of a callback: the operator's `baseUrl` (without a trailing slash: OperatorConfig;
 * directory.ts strips it once per row) joined to `path` with exactly one slash.
 */
export function callbackUrl(baseUrl: string, path: string): string {
  return `${baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
}

/** The player a Balance callback asks about (a session of the operator). */
export interface BalanceQuery {
  readonly userId: string;
  /** ISO 4217 code or crypto ticker, as on the session. */
  readonly currency: string;
  /** The session's token, sent as `session_token`. */
  readonly sessionToken: string;
}

/**
 * The Balance callback (docs/contract.md "Implemented by the operator";
 * schemas/callbacks/balance.request.json), the same in forms A and B: POST to the operator's
 * `balancePath` with exactly `{user_id, currency, session_token}`, under `webhookId` (the caller's:
 * balance callbacks move no money, so no id is derived from a transaction). Pure; never throws.
 */
export function buildBalanceRequest(
  op: { readonly baseUrl: string; readonly balancePath: string },
  player: BalanceQuery,
  webhookId: string,
): CallbackRequest {
  return {
    method: 'POST',
    url: callbackUrl(op.baseUrl, op.balancePath),
    webhookId,
    body: { user_id: player.userId, currency: player.currency, session_token: player.sessionToken },
  };
}

/** ISO 4217 and the default crypto precisions, for callers that pass no table of their own. */
let defaultCurrencies: Currencies | undefined;
const defaults = (): Currencies => {
  defaultCurrencies ??= currencyTable();
  return defaultCurrencies;
};

/**
 * The method, URL, webhook-id and exact body of `job` for `operator`; amounts in the precision of
 * the bet's currency from `currencies` (default: ISO 4217 and the default crypto precisions).
 * @throws Error for a round close of an operator whose roundClose is `none` (nothing to send), or
 *   `round-end` without a roundEndPath; MoneyError (CURRENCY_UNKNOWN, AMOUNT_INVALID,
 *   AMOUNT_INEXACT) when the amount cannot be written in the operator's format. Both are
 *   permanent: the dispatcher parks the callback.
 */
export function buildRequest(
  job: CallbackJob,
  op: OperatorConfig,
  session: SessionInfo,
  currencies: Currencies = defaults(),
): CallbackRequest {
  const b = job.bet;
  const common = {
    user_id: b.user_id,
    currency: b.currency,
    amount: currencies.wireAmount(job.amountMinor, b.currency, op.amountFormat),
    provider: PROVIDER,
  };
  const round = String(b.round_id);
  const webhookId = `${job.kind}-${job.txId}`;
  const url = (path: string) => callbackUrl(op.baseUrl, path);
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
      // A free bet is registered as a bet that moves no money, carrying the free bet's id.
      ...(b.mode === 'free' ? { free_bet_id: b.free_bet_id } : {}),
    };
    return { method: 'POST', url: url(op.betPath), webhookId, body };
  }
  if (job.kind === 'close') {
    if (op.roundClose === 'none') throw new Error(`operator ${op.operatorId} closes no rounds`);
    if (op.roundClose === 'round-end') {
      if (!op.roundEndPath) throw new Error(`operator ${op.operatorId} has no round_end_path`);
      const body = {
        ...common,
        provider_tx_id: op.form === 'A' ? job.txId : String(job.txId),
        linked_tx_id: op.form === 'A' ? job.betTxId : String(job.betTxId),
        game: b.game,
        action: 'round_end',
        round_id: round,
        session_token: session.sessionToken,
      };
      return { method: 'POST', url: url(op.roundEndPath), webhookId: `round_end-${job.txId}`, body };
    }
    // zero-win: the form's own win with amount 0, under the win's id and webhook-id.
    return buildRequest({ ...job, kind: 'win' }, op, session, currencies);
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
  const rollback = {
    ...common,
    game: b.game,
    action: 'rollback',
    round_id: round,
    mode: b.mode,
    count_register: b.count_register,
    session_token: session.sessionToken,
  };
  if (op.form === 'A') {
    const body = { ...rollback, provider_tx_id: job.txId, linked_tx_id: job.betTxId };
    return { method: 'POST', url: url(op.rollbackPath), webhookId, body };
  }
  // Form B: "the same fields as Register Earnings" (docs/contract.md "Operator callbacks"): no linked_tx_id; the operator finds
  // the bet by player and round, as for Register Earnings.
  const body = { ...rollback, provider_tx_id: String(job.txId) };
  return { method: 'GET', url: url(FORM_B_ROLLBACK_PATH), webhookId, body };
}
