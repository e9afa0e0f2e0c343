import { AppError } from '../rules/errors.ts';

export { AppError };

/** Invalid configuration; the process stops at start-up with this message. */
export class ConfigError extends AppError {
  constructor(message: string) {
    super('CONFIG_INVALID', message);
  }
}

/** A record on a topic that cannot be decoded (bad framing, unknown schema id, bad Avro body). */
export class DecodeError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('RECORD_UNDECODABLE', message, { cause });
  }
}

/** A value that cannot be encoded with its schema. */
export class EncodeError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('RECORD_UNENCODABLE', message, { cause });
  }
}

/** A dependency (database, broker) is unreachable; the request may succeed later. */
export class UnavailableError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('DEPENDENCY_UNAVAILABLE', message, { cause, retryable: true });
  }
}

/**
 * A record refused before it was sent: its deadline (Unix ms) passed while it waited for an append
 * in flight (lib/log/batching-appender.ts). Nothing of it is on the log.
 */
export class AppendDeadlineError extends AppError {
  readonly deadline: number;

  constructor(deadline: number, now: number) {
    super(
      'APPEND_DEADLINE_PASSED',
      `not appended: its deadline ${new Date(deadline).toISOString()} passed while it waited (${now - deadline} ms ago)`,
    );
    this.deadline = deadline;
  }
}
