/**
 * What the conformance kit drives: an operator's callback configuration (its `operators` row, or
 * one given on the command line with --url) and the dedicated test player.
 */
import { randomBytes } from 'node:crypto';
import type { AmountFormat } from '../../rules/money/currencies.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../rules/retry/schedule.ts';
import { type AnswerPreset, answerTable } from '../../rules/wallet/answers.ts';
import type { OperatorCallbackConfig } from '../db/operator-config.ts';

/** The kit's player: a user id and session token of its own, and a currency. */
export interface TestPlayer {
  readonly userId: string;
  readonly currency: string;
  readonly sessionToken: string;
}

export interface Target {
  readonly operator: OperatorCallbackConfig;
  readonly player: TestPlayer;
}

/** Paths an operator given by --url has unless told otherwise (the sandbox's form-A paths). */
export const DEFAULT_PATHS = {
  bet: '/wallet/bet',
  win: '/wallet/win',
  rollback: '/wallet/rollback',
  balance: '/wallet/balance',
} as const;

/** An operator described on the command line (--url mode). */
export interface UrlOperatorOptions {
  readonly url: string;
  readonly secret: string;
  readonly form: 'A' | 'B';
  readonly preset: AnswerPreset;
  readonly timeoutMs: number;
  readonly amountFormat: AmountFormat;
  readonly paths: {
    readonly bet: string;
    readonly win: string;
    readonly rollback: string;
    readonly balance: string;
  };
}

/** The configuration of an operator given by --url, as an `operators` row would hold it. */
export function urlOperator(o: UrlOperatorOptions): OperatorCallbackConfig {
  return {
    operatorId: 'conformance',
    form: o.form,
    baseUrl: o.url.replace(/\/+$/, ''),
    betPath: o.paths.bet,
    winPath: o.paths.win,
    rollbackPath: o.paths.rollback,
    balancePath: o.paths.balance,
    signingSecret: o.secret,
    timeoutMs: o.timeoutMs,
    retrySchedule: DEFAULT_RETRY_SCHEDULE,
    answers: answerTable(o.preset),
    roundClose: 'zero-win',
    roundEndPath: null,
    amountFormat: o.amountFormat,
  };
}

/**
 * The test player: `conformance-<8 hex>` in USD with a session token `conformance-<16 hex>`
 * unless given (an operator that checks tokens gives one it issued for its test player).
 */
export function testPlayer(o: { user?: string; currency?: string; sessionToken?: string }): TestPlayer {
  return {
    userId: o.user ?? `conformance-${randomBytes(4).toString('hex')}`,
    currency: o.currency ?? 'USD',
    sessionToken: o.sessionToken ?? `conformance-${randomBytes(8).toString('hex')}`,
  };
}
