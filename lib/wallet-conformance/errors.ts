/**
 * Errors of the wallet conformance kit, on the project's base error (docs/conventions.md §6).
 * Each class lives beside the code that throws it (services/wallet-conformance/cli.ts, rows.ts); its code is listed here.
 */
import { AppError } from '../errors.ts';

/** Codes of the conformance kit's errors; a code not listed here does not compile. */
export type ConformanceErrorCode =
  /** A bad command-line argument found after parsing (exit 2). */
  | 'USAGE_INVALID'
  /** A balance could not be read, so a row cannot judge money (the row fails). */
  | 'BALANCE_UNREADABLE';

/** Base of the conformance kit's errors: an {@link AppError} whose code is one of {@link ConformanceErrorCode}. */
export abstract class ConformanceError extends AppError {
  declare readonly code: ConformanceErrorCode;

  constructor(code: ConformanceErrorCode, message: string) {
    super(code, message);
  }
}
