/**
 * Errors of the round engine's log reads (verify, log tail), on the project's base error.
 */
import { AppError } from '../../lib/errors.ts';
import type { RoundOpened } from '../../rules/rounds/round.ts';

/** The round asked for is not in the log. */
export class RoundNotFoundError extends AppError {
  constructor(message: string) {
    super('ROUND_NOT_FOUND', message);
  }
}

/** The round asked for is open in the log (RoundOpened, no RoundFinished yet): nothing is revealed to verify. */
export class RoundOpenError extends AppError {
  constructor(
    message: string,
    /** The round's RoundOpened. */
    readonly opened: RoundOpened,
  ) {
    super('ROUND_OPEN', message);
  }
}
