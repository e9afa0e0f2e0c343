/**
 * The callback routes of both contract forms (docs/contract.md "Implemented by the operator"): form A POST
 * /wallet/{bet,win,balance,rollback}; form B GET with a JSON body on /webhooks/platform/rewards and
 * /webhooks/platform/rollback. Order per request: signature (Standard Webhooks over the raw body),
 * JSON, the exact schema when strict (mode.ts), field validation, then the fault rule if any, then
 * the ledger. Every answer is written as an operator of the mode's preset writes it (presets.ts).
 * Quirks (quirks.ts) may skip the signature check, hold every answer, or switch ledger rules off.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Webhook } from 'standardwebhooks';
import type { Sql } from '../../lib/db/pool.ts';
import type { CallbackSchemas } from '../../lib/http/callback-schemas.ts';
import type { AnswerPreset } from '../../rules/wallet/answers.ts';
import { FORM_B_REWARDS_PATH, FORM_B_ROLLBACK_PATH } from '../../rules/wallet/bodies.ts';
import { replyForError, SandboxError } from './errors.ts';
import type { Fault, FaultInjector } from './faults.ts';
import { applyMovement, type MovementResult, readBalance } from './ledger.ts';
import type { SandboxMetrics } from './metrics.ts';
import type { Mode } from './mode.ts';
import type { LedgerMoney } from './money.ts';
import { errorAnswer, okAnswer, type SandboxAnswer } from './presets.ts';
import type { Quirks } from './quirks.ts';
import type { VerifyingSecret } from './secret.ts';
import { FORM_A_PATHS } from './wallet-endpoints.ts';
import {
  type CallbackKind,
  checkExact,
  type Form,
  parseBalance,
  parseJsonObject,
  parseMovement,
} from './wire.ts';

export interface CallbackDeps {
  readonly sql: Sql;
  /** The secret callbacks are verified with; an admin may replace it at run time (secret.ts). */
  readonly secret: VerifyingSecret;
  readonly faults: FaultInjector;
  /** Rules switched off for the conformance kit's tests (none by default). */
  readonly quirks: Quirks;
  /** The answer preset played and the strict switch (mode.ts). */
  readonly mode: Mode;
  /** The exact callback bodies the strict mode checks (schemas/callbacks). */
  readonly schemas: CallbackSchemas;
  readonly metrics: SandboxMetrics;
  /** The currency table and the balance of an account at first sight. */
  readonly money: LedgerMoney;
  /** Aborted when the app closes, so held requests let go. */
  readonly closing: AbortSignal;
}

const ROUTES: readonly { method: 'POST' | 'GET'; url: string; kind: CallbackKind; form: Form }[] = [
  { method: 'POST', url: FORM_A_PATHS.bet, kind: 'bet', form: 'A' },
  { method: 'POST', url: FORM_A_PATHS.win, kind: 'win', form: 'A' },
  { method: 'POST', url: FORM_A_PATHS.balance, kind: 'balance', form: 'A' },
  { method: 'POST', url: FORM_A_PATHS.rollback, kind: 'rollback', form: 'A' },
  // Form B's fixed paths, as the saga sends them (rules/wallet/bodies.ts).
  { method: 'GET', url: FORM_B_REWARDS_PATH, kind: 'win', form: 'B' },
  { method: 'GET', url: FORM_B_ROLLBACK_PATH, kind: 'rollback', form: 'B' },
];

/** Every callback path, for answering what fastify refuses before a route (app.ts). */
export const CALLBACK_PATHS: ReadonlySet<string> = new Set(ROUTES.map((r) => r.url));

/** Broken JSON for the `malformed` fault: a 200 whose body a client cannot parse. */
export const MALFORMED_BODY = '{"operator_tx_id": "0", "new_balance": ';

function header(h: IncomingHttpHeaders, name: string): string {
  const v = h[name];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

/** @throws SandboxError INVALID_SIGNATURE when a webhook-* header is missing or the HMAC or timestamp fails. */
function verifySignature(
  webhook: Webhook,
  raw: string,
  headers: IncomingHttpHeaders,
  metrics: SandboxMetrics,
): void {
  try {
    // jsonParse off: a signed body that is not JSON is a 400 (below), not a signature failure.
    webhook.verify(
      raw,
      {
        'webhook-id': header(headers, 'webhook-id'),
        'webhook-timestamp': header(headers, 'webhook-timestamp'),
        'webhook-signature': header(headers, 'webhook-signature'),
      },
      { jsonParse: false },
    );
  } catch (err) {
    metrics.invalidSignatures.inc();
    throw new SandboxError('INVALID_SIGNATURE', `signature check failed: ${(err as Error).message}`);
  }
}

/** Resolves after `ms`, when the caller hangs up, or when the app closes, whichever is first. */
function hold(ms: number, reply: FastifyReply, closing: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      reply.raw.off('close', done);
      closing.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    reply.raw.once('close', done);
    closing.addEventListener('abort', done, { once: true });
  });
}

/** Sends `a`. */
function send(reply: FastifyReply, a: SandboxAnswer): true {
  reply.code(a.status).send(a.body);
  return true;
}

/**
 * Answers one callback whose work (`apply`) is validated and ready, under `fault` if any, as an
 * operator of `preset` answers.
 * @returns false when no answer was sent (connection dropped or already gone).
 */
async function answer(
  deps: CallbackDeps,
  reply: FastifyReply,
  fault: Fault | null,
  preset: AnswerPreset,
  apply: () => Promise<MovementResult>,
): Promise<boolean> {
  const ok = async () => {
    const r = await apply();
    const a = okAnswer(preset, r.response, r.replay);
    if (deps.quirks.has('extra-answer-field'))
      return send(reply, { ...a, body: { ...a.body, bonus_balance: '0.00' } });
    return send(reply, a);
  };
  const injected = (message: string) => send(reply, errorAnswer(preset, 'INJECTED_FAULT', message, 500));
  switch (fault?.mode) {
    case undefined:
      return ok();
    case 'latency':
      await hold(fault.latencyMs, reply, deps.closing);
      return ok();
    case 'error500':
      return injected('error500 fault; nothing was applied');
    case 'timeout':
      await hold(fault.latencyMs, reply, deps.closing);
      if (reply.raw.destroyed || reply.raw.writableEnded) {
        reply.hijack();
        return false;
      }
      return injected('timeout fault; nothing was applied');
    case 'commit-then-500':
      await apply();
      return injected('commit-then-500 fault; the callback was applied');
    case 'commit-then-drop':
      await apply();
      reply.hijack();
      reply.raw.socket?.destroy();
      return false;
    case 'malformed':
      await apply();
      reply.code(200).type('application/json').send(MALFORMED_BODY);
      return true;
  }
}

/** Registers the six callback routes on `app`, whose JSON parser must keep the raw string body. */
export function registerCallbacks(app: FastifyInstance, deps: CallbackDeps): void {
  for (const r of ROUTES) {
    app.route({
      method: r.method,
      url: r.url,
      handler: async (request, reply) => {
        const count = (status: string) => deps.metrics.callbacks.inc({ kind: r.kind, form: r.form, status });
        // One request is answered in the mode it arrived in, whatever PUT /_sandbox/mode does meanwhile.
        const { preset, strict } = deps.mode.list();
        try {
          const raw = typeof request.body === 'string' ? request.body : '';
          if (!deps.quirks.has('accept-any-signature'))
            verifySignature(deps.secret.current, raw, request.headers, deps.metrics);
          const body = parseJsonObject(raw);
          if (strict) checkExact(deps.schemas, r.kind, r.form, body);
          let apply: () => Promise<MovementResult>;
          if (r.kind === 'balance') {
            const b = parseBalance(body, deps.money.currencies);
            apply = async () => ({ response: await readBalance(deps.sql, b, deps.money), replay: false });
          } else {
            const m = parseMovement(r.kind, r.form, body, deps.money.currencies);
            const rules = { quirks: deps.quirks, strict };
            apply = () => applyMovement(deps.sql, m, deps.money, rules);
          }
          const fault = deps.faults.take(r.kind);
          if (fault) {
            deps.metrics.faults.inc({ mode: fault.mode });
            request.log.info({ kind: r.kind, fault: fault.mode }, 'injecting fault');
          }
          if (deps.quirks.has('slow-answers')) await hold(deps.quirks.slowMs, reply, deps.closing);
          const sent = await answer(deps, reply, fault, preset, apply);
          count(sent ? String(reply.statusCode) : 'dropped');
          return reply;
        } catch (err) {
          replyForError(err, reply, preset);
          count(String(reply.statusCode));
          return reply;
        }
      },
    });
  }
}
