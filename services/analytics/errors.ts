/**
 * Errors of the analytics replay, on the project's base error (lib/errors.ts). The CLI maps
 * them to exit statuses in one place (cli.ts): input → 2, log unavailable → 3.
 */
import { AppError } from '../../lib/errors.ts';

/** A bad argument: malformed bound, --from after --to, unknown game or partition. */
export class AnalyticsInputError extends AppError {
  constructor(message: string) {
    super('ANALYTICS_INPUT_INVALID', message);
  }
}

/** The log cannot be read: broker unreachable, topic missing, read timed out. */
export class LogUnavailableError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('LOG_UNAVAILABLE', message, { cause, retryable: true });
  }
}
