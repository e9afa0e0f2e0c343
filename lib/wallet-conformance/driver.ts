/**
 * The kit's hands on an operator wallet: it sends the callbacks the wallet saga sends (the same
 * bodies from rules/wallet/bodies.ts buildRequest, signed by lib/http/callback-client.ts), times
 * each one, classifies its answer with the operator's answer table (answerOf), checks every ok
 * answer against its schema (schemas/callbacks/*.response.json), and records every
 * request and answer for the report. Also the balance callback (docs/contract.md "Implemented by the operator"), which the
 * rows use to see whether money moved.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { Answer } from '../../rules/wallet/answers.ts';
import {
  buildBalanceRequest,
  buildRequest,
  type CallbackKind,
  type CallbackRequest,
} from '../../rules/wallet/bodies.ts';
import type { BetContext } from '../../rules/wallet/events.ts';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import {
  answerOf,
  type CallbackClient,
  type Exchange,
  type SigningSecrets,
} from '../http/callback-client.ts';
import {
  type CallbackSchemas,
  type ResponseSchema,
  responseSchemaOf,
  type SchemaAction,
} from '../http/callback-schemas.ts';
import type { Target } from './target.ts';

/** How a request is signed: as the platform signs, with another secret, not at all, or 10 min old. */
export type Signing = 'valid' | 'wrong-secret' | 'unsigned' | 'stale';

/** Age of the `stale` signature's webhook-timestamp, ms (Standard Webhooks' tolerance is 5 min). */
export const STALE_MS = 10 * 60_000;

/** One request and what came back, as the report shows it. */
export interface Recorded {
  readonly step: string;
  readonly request: {
    readonly method: 'GET' | 'POST';
    readonly url: string;
    readonly webhook_id: string;
    readonly signing: Signing;
    readonly body: Record<string, unknown>;
  };
  /** The HTTP answer (body parsed when it is JSON), or why there was none. */
  readonly answer:
    | { readonly status: number; readonly body: unknown }
    | { readonly timeout_ms: number }
    | { readonly error: string };
  /** Wall time of the exchange, ms. */
  readonly ms: number;
  /** The answer's class under the operator's table (`balance` for the balance callback: ok or failed). */
  readonly class: Answer['class'];
  readonly code: string | null;
  readonly reason: string | null;
  /** An ok answer's check against its schema (null for any other answer): what does not match. */
  readonly schema: { readonly name: ResponseSchema; readonly problems: readonly string[] } | null;
}

/** A money callback's record with its classified answer. */
export interface MoneyResult {
  readonly record: Recorded;
  readonly answer: Answer;
  /** HTTP status, or null when no answer came. */
  readonly status: number | null;
}

/** A balance callback's record; `minor` when a balance could be read. */
export interface BalanceResult {
  readonly record: Recorded;
  readonly minor: number | null;
  /** Why the answer is not a good balance answer (null when it is). */
  readonly problem: string | null;
  readonly body: Record<string, unknown> | null;
}

/** One money callback to make: a bet and what is sent for it. */
export interface MoneyCall {
  readonly kind: Exclude<CallbackKind, 'close'>;
  readonly betTxId: number;
  /** This callback's own provider_tx_id (bet: the bet's). */
  readonly txId: number;
  readonly roundId: number;
  readonly amountMinor: number;
  readonly signing?: Signing;
  /** Per-request timeout, ms (default: the kit's rule timeout). */
  readonly timeoutMs?: number;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The code to show for an answer: the refusal's, or for a failure the operator's own code where
 * the classification names it (`HTTP 409 BET_SETTLED: …` → BET_SETTLED) rather than OPERATOR_ERROR.
 */
function codeOf(a: { class: string; code?: string; reason?: string }): string | null {
  if (a.class !== 'failed') return a.code ?? null;
  const label = /^HTTP \d{3} ([A-Za-z0-9_.:-]+):/.exec(a.reason ?? '')?.[1];
  return label ?? a.code ?? null;
}

/** A balance (decimal string or number, possibly negative) in minor units, or undefined. */
export function balanceMinor(currencies: Currencies, value: unknown, currency: string): number | undefined {
  const t = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof t !== 'string' || !/^-?\d+(\.\d+)?$/.test(t)) return undefined;
  const negative = t.startsWith('-');
  // Trailing zeros past the exponent ("1000.0000" USD) say nothing more: drop them.
  const abs = (negative ? t.slice(1) : t).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  const minor = currencies.parseAmount(abs, currency);
  return minor === undefined ? undefined : negative ? -minor : minor;
}

/** Records and classifies exchanges with one operator for one test player. */
export class Driver {
  readonly records: Recorded[] = [];

  constructor(
    private readonly target: Target,
    private readonly client: CallbackClient,
    private readonly currencies: Currencies,
    /** Timeout of every request that does not name its own, ms. */
    private readonly ruleTimeoutMs: number,
    /** The ok answers' schemas (lib/http/callback-schemas.ts). */
    private readonly schemas: CallbackSchemas,
  ) {}

  /** The check of an ok answer of `action` against its schema; null when the answer is not ok. */
  private schemaCheck(action: SchemaAction, ex: Exchange, ok: boolean): Recorded['schema'] {
    if (!ok || ex.type !== 'answer') return null;
    const name = responseSchemaOf(action, this.target.operator.form);
    return { name, problems: this.schemas.response(name, parsed(ex.text)) };
  }

  /**
   * 'valid' signs as the platform does at this moment: during a signing-secret rotation's overlap
   * with the new and the replaced secret (rules/wallet/signing.ts), so an operator that has not
   * switched yet still passes.
   */
  private secretOf(signing: Signing): SigningSecrets {
    if (signing === 'unsigned') return null;
    if (signing === 'wrong-secret') return `whsec_${randomBytes(32).toString('base64')}`;
    return signingSecretsAt(this.target.operator, Date.now());
  }

  private async exchange(
    req: CallbackRequest,
    signing: Signing,
    timeoutMs: number,
  ): Promise<{ ex: Exchange; ms: number }> {
    const at = Date.now() - (signing === 'stale' ? STALE_MS : 0);
    const t0 = performance.now();
    const ex = await this.client.send(req, this.secretOf(signing), timeoutMs, at);
    return { ex, ms: Math.round(performance.now() - t0) };
  }

  private record(
    step: string,
    req: CallbackRequest,
    signing: Signing,
    ex: Exchange,
    ms: number,
    answer: Pick<Answer, 'class'> & { code?: string; reason?: string },
    schema: Recorded['schema'],
  ): Recorded {
    const r: Recorded = {
      step,
      request: { method: req.method, url: req.url, webhook_id: req.webhookId, signing, body: req.body },
      answer:
        ex.type === 'answer'
          ? { status: ex.status, body: parsed(ex.text) }
          : ex.type === 'timeout'
            ? { timeout_ms: ex.timeoutMs }
            : { error: ex.reason },
      ms,
      class: answer.class,
      code: codeOf(answer),
      reason: answer.reason ?? null,
      schema,
    };
    this.records.push(r);
    return r;
  }

  /** The bet context of the kit's callbacks: the test player, a crash round of the kit's own. */
  private betContext(roundId: number, amountMinor: number): BetContext {
    const p = this.target.player;
    return {
      session_id: '00000000-0000-4000-8000-000000000000',
      operator_id: this.target.operator.operatorId,
      user_id: p.userId,
      currency: p.currency,
      game: 'crash',
      round_id: roundId,
      amount_minor: amountMinor,
      mode: 'default',
      bonus_code: null,
      free_bet_id: null,
      count_register: 1,
      demo: false,
    };
  }

  /** Sends one bet, win or rollback exactly as the saga would, and classifies the answer. */
  async money(step: string, call: MoneyCall): Promise<MoneyResult> {
    const job = {
      kind: call.kind,
      txId: call.txId,
      betTxId: call.betTxId,
      amountMinor: call.amountMinor,
      bet: this.betContext(call.roundId, call.amountMinor),
    };
    const session = { sessionToken: this.target.player.sessionToken, extraData: null };
    const req = buildRequest(job, this.target.operator, session, this.currencies);
    const signing = call.signing ?? 'valid';
    const { ex, ms } = await this.exchange(req, signing, call.timeoutMs ?? this.ruleTimeoutMs);
    const answer = answerOf(ex, this.target.operator.answers, { ...req, kind: call.kind });
    const schema = this.schemaCheck(req.body.action as SchemaAction, ex, answer.class === 'ok');
    const record = this.record(step, req, signing, ex, ms, answer, schema);
    return { record, answer, status: ex.type === 'answer' ? ex.status : null };
  }

  /**
   * The balance callback (POST balance_path {user_id, currency, session_token}). A good answer is
   * a success under the operator's preset (2xx; 200 under `seed`; 200 with an ok `status` under
   * `status-in-body`) whose body carries `balance` in the player's currency.
   */
  async balance(step: string, timeoutMs = this.ruleTimeoutMs): Promise<BalanceResult> {
    const { operator: op, player: p } = this.target;
    const req = buildBalanceRequest(
      op,
      { userId: p.userId, currency: p.currency, sessionToken: p.sessionToken },
      `balance-conformance-${randomBytes(6).toString('hex')}`,
    );
    const { ex, ms } = await this.exchange(req, 'valid', timeoutMs);
    const { problem, body, minor } = this.readBalance(ex);
    const record = this.record(
      step,
      req,
      'valid',
      ex,
      ms,
      problem === null ? { class: 'ok' } : { class: 'failed', reason: problem },
      this.schemaCheck('balance', ex, problem === null),
    );
    return { record, minor, problem, body };
  }

  private readBalance(ex: Exchange): {
    problem: string | null;
    body: Record<string, unknown> | null;
    minor: number | null;
  } {
    const none = (problem: string) => ({ problem, body: null, minor: null });
    if (ex.type === 'timeout') return none(`no answer within ${ex.timeoutMs} ms`);
    if (ex.type === 'error') return none(ex.reason);
    const table = this.target.operator.answers;
    const success = table.preset === 'http-status' ? ex.status >= 200 && ex.status < 300 : ex.status === 200;
    if (!success) return none(`HTTP ${ex.status}`);
    const j = parsed(ex.text);
    if (j === null || typeof j !== 'object' || Array.isArray(j)) return none('body is not a JSON object');
    const body = j as Record<string, unknown>;
    if (table.preset === 'status-in-body' && !table.okStatuses.includes(String(body.status)))
      return { problem: `status ${String(body.status)} is not a success`, body, minor: null };
    const minor = balanceMinor(this.currencies, body.balance, this.target.player.currency);
    if (minor === undefined)
      return {
        problem: `balance ${JSON.stringify(body.balance)} is not a decimal in ${this.target.player.currency}`,
        body,
        minor: null,
      };
    return { problem: null, body, minor };
  }
}
