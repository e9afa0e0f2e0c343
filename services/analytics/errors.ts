/**
 * Errors of the analytics replay, on the project's base error (lib/errors.ts). The CLI maps
 * them to exit statuses in one place (cli.ts): input → 2, log unavailable → 3.
 */
import { AppError } from '../../lib/errors.ts';

/** Codes of the analytics replay's errors; a code not listed here does not compile. */
export type AnalyticsErrorCode = 'ANALYTICS_INPUT_INVALID' | 'LOG_UNAVAILABLE';

/** Base of the analytics errors: an {@link AppError} whose code is one of {@link AnalyticsErrorCode}. */
abstract class AnalyticsError extends AppError {
  declare readonly code: AnalyticsErrorCode;

  constructor(
    code: AnalyticsErrorCode,
    message: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(code, message, options);
  }
}

/** A bad argument: malformed bound, --from after --to, unknown game or partition. */
export class AnalyticsInputError extends AnalyticsError {
  constructor(message: string) {
    super('ANALYTICS_INPUT_INVALID', message);
  }
}

/** The log cannot be read: broker unreachable, topic missing, read timed out. */
export class LogUnavailableError extends AnalyticsError {
  constructor(message: string, cause?: unknown) {
    super('LOG_UNAVAILABLE', message, { cause, retryable: true });
  }
}
