/**
 * The project's base error and the errors the pure rules throw. Every other package's errors
 * extend `AppError` (lib/errors.ts re-exports it).
 */

/**
 * Base error of the project (STYLE.md §6): a stable string `code`, an optional `cause`, and a
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

/** Malformed input to a fairness computation or verification (bad hex, index out of range, unknown game). */
export class FairnessInputError extends AppError {
  constructor(message: string) {
    super('FAIRNESS_INPUT_INVALID', message);
  }
}
