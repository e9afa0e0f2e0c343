/**
 * The project's base error and the errors the pure rules throw. Every other package's errors
 * extend `AppError` (lib/errors.ts re-exports it).
 */

/**
 * Base error of the project (docs/conventions.md §6): a stable string `code`, an optional `cause`, and a
 * `retryable` flag that retry policies read. HTTP statuses are assigned in one place per
 * service (the API's error handler), never where the error is thrown.
 */
export class AppError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/**
 * Every code an error of the pure rules carries (this file, rules/bets/payout.ts,
 * rules/retry/schedule.ts, rules/wallet/answers.ts); a code not listed here does not compile.
 */
export type RulesErrorCode =
  | 'FAIRNESS_INPUT_INVALID'
  | MoneyErrorCode
  | 'ROUND_REFUSED'
  | 'INVALID_BET'
  | 'RETRY_POLICY_INVALID'
  | 'ANSWER_TABLE_INVALID';

/** Base of the rules' errors: an {@link AppError} whose code is one of {@link RulesErrorCode}. */
export abstract class RulesError extends AppError {
  declare readonly code: RulesErrorCode;

  constructor(code: RulesErrorCode, message: string) {
    super(code, message);
  }
}

/** Malformed input to a fairness computation or verification (bad hex, index out of range, unknown game). */
export class FairnessInputError extends RulesError {
  declare readonly code: 'FAIRNESS_INPUT_INVALID';

  constructor(message: string) {
    super('FAIRNESS_INPUT_INVALID', message);
  }
}

/** What a money conversion refused (rules/money). */
export type MoneyErrorCode =
  | 'CURRENCY_UNKNOWN'
  | 'CURRENCY_CONFIG_INVALID'
  | 'AMOUNT_INVALID'
  | 'AMOUNT_INEXACT';

/**
 * An amount or currency the money rules cannot handle: an unknown currency code, a bad crypto
 * precision setting, a minor amount that is not a safe integer, or an amount a JSON number cannot
 * carry exactly.
 */
export class MoneyError extends RulesError {
  declare readonly code: MoneyErrorCode;

  constructor(code: MoneyErrorCode, message: string) {
    super(code, message);
  }
}

/**
 * A record of the `rounds` topic that readers refuse (rules/rounds/admission.ts): `reason` is
 * `future`, `past`, `duplicate` or `conflict`; the message (the projector's dead-letter reason)
 * names it and the times or round id involved.
 */
export class RoundRefusedError extends RulesError {
  declare readonly code: 'ROUND_REFUSED';
  readonly reason: string;

  constructor(reason: string, detail: string) {
    super('ROUND_REFUSED', `round refused (${reason}): ${detail}`);
    this.reason = reason;
  }
}
