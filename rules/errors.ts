/**
 * Errors of the round engine, on the project's base error (lib/errors.ts).
 */
import { AppError } from '../lib/errors.ts';

/** Malformed input to a fairness computation or verification (bad hex, index out of range, unknown game). */
export class FairnessInputError extends AppError {
  constructor(message: string) {
    super('FAIRNESS_INPUT_INVALID', message);
  }
}

/** The round asked for is not in the log. */
export class RoundNotFoundError extends AppError {
  constructor(message: string) {
    super('ROUND_NOT_FOUND', message);
  }
}
