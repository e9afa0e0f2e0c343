/**
 * Errors of the round engine's log reads (verify, log tail), on the project's base error.
 */
import { AppError } from '../../lib/errors.ts';

/** The round asked for is not in the log. */
export class RoundNotFoundError extends AppError {
  constructor(message: string) {
    super('ROUND_NOT_FOUND', message);
  }
}
