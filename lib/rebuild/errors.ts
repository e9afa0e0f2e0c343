/**
 * Errors of a read-model rebuild (docs/conventions.md §6): a stable code per expected failure, so the command
 * line prints one clear sentence and tests assert the code rather than a message.
 */
import { AppError } from '../errors.ts';
import type { Comparison } from './compare.ts';

export type RebuildErrorCode =
  /** The name is not one of READ_MODELS. */
  | 'UNKNOWN_READ_MODEL'
  /** Postgres did not answer. */
  | 'DATABASE_UNREACHABLE'
  /** No broker of KAFKA_BROKERS answered. */
  | 'BROKER_UNREACHABLE'
  /** The model's topic does not exist (wrong TOPIC_NAMESPACE?). */
  | 'TOPIC_MISSING'
  /** The live tables are not there (migrations not applied in DATABASE_SCHEMA?). */
  | 'TABLES_MISSING'
  /** Another rebuild of the same model and schema holds the lock. */
  | 'REBUILD_RUNNING'
  /** A table outside the model references one of its tables; moving it would break that reference. */
  | 'OUTSIDE_REFERENCE'
  /** DATABASE_SCHEMA is too long for the shadow schema's name (63 bytes at most in Postgres). */
  | 'SCHEMA_NAME_TOO_LONG'
  /** The replay stopped moving (records that are never delivered, e.g. transaction markers). */
  | 'REBUILD_STALLED'
  /** The swap could not take its lock within the allowed attempts. */
  | 'SWAP_LOCK_TIMEOUT'
  /** The shadow checkpoint is not the live one at the swap (a bug; nothing was swapped). */
  | 'CHECKPOINT_MISMATCH'
  /** The rebuilt tables differ from the live ones (before the swap: nothing was swapped). */
  | 'DIFFERENCES'
  /** Ended while it waited for its swap (the process running it stopped): nothing was swapped. */
  | 'CANCELLED';

/** A rebuild that could not be done or was refused; `code` says which. */
export class RebuildError extends AppError {
  declare readonly code: RebuildErrorCode;
  /** With DIFFERENCES: what differed. */
  readonly comparison: Comparison | undefined;

  constructor(
    code: RebuildErrorCode,
    message: string,
    options: { cause?: unknown; retryable?: boolean; comparison?: Comparison } = {},
  ) {
    super(code, message, options);
    this.comparison = options.comparison;
  }
}
