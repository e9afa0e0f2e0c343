/**
 * Errors of the dead-letter tools (docs/conventions.md §6): a stable code per expected refusal, so the command
 * line prints one clear sentence and tests assert the code.
 */
import { AppError } from '../errors.ts';

export type DeadLetterErrorCode =
  /** Not one of DEAD_LETTER_TOPICS. */
  | 'UNKNOWN_TOPIC'
  /** The dead-letter topic does not exist on the broker (wrong TOPIC_NAMESPACE?). */
  | 'TOPIC_MISSING'
  /** No broker of KAFKA_BROKERS answered. */
  | 'BROKER_UNREACHABLE'
  /** A partition:offset outside the partition's retained range. */
  | 'OFFSET_OUT_OF_RANGE'
  /** A malformed or contradictory selection (e.g. --tx-id on the rounds topic, nothing selected). */
  | 'BAD_SELECTION'
  /** The selection matched no record (or, for `callbacks redrive`, no parked or retrying callback). */
  | 'NOTHING_MATCHES'
  /** `callbacks show` of a provider_tx_id that has no callback. */
  | 'NO_SUCH_CALLBACK'
  /** Postgres of DATABASE_URL did not answer, or its schema has no wallet_callbacks table. */
  | 'DATABASE_UNREACHABLE';

/** A dead-letter command that was refused; nothing was appended or re-driven. */
export class DeadLetterError extends AppError {
  declare readonly code: DeadLetterErrorCode;

  constructor(code: DeadLetterErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
