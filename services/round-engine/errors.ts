/**
 * Errors of the round engine's log reads (verify, log tail), on the project's base error.
 */
import { AppError } from '../../lib/errors.ts';
import type { RoundOpened } from '../../rules/rounds/round.ts';

/** Codes of the round engine's errors; a code not listed here does not compile. */
export type RoundEngineErrorCode = 'ROUND_NOT_FOUND' | 'ROUND_OPEN';

/** Base of the round engine's errors: an {@link AppError} whose code is one of {@link RoundEngineErrorCode}. */
abstract class RoundEngineError extends AppError {
  declare readonly code: RoundEngineErrorCode;

  constructor(code: RoundEngineErrorCode, message: string) {
    super(code, message);
  }
}

/** The round asked for is not in the log. */
export class RoundNotFoundError extends RoundEngineError {
  constructor(message: string) {
    super('ROUND_NOT_FOUND', message);
  }
}

/** The round asked for is open in the log (RoundOpened, no RoundFinished yet): nothing is revealed to verify. */
export class RoundOpenError extends RoundEngineError {
  constructor(
    message: string,
    /** The round's RoundOpened. */
    readonly opened: RoundOpened,
  ) {
    super('ROUND_OPEN', message);
  }
}
