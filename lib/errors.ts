import { AppError } from '../rules/errors.ts';

export { AppError };

/** Codes of the adapters' errors (this file); a code not listed here does not compile. */
export type LibErrorCode =
  | 'CONFIG_INVALID'
  | 'RECORD_UNDECODABLE'
  | 'RECORD_UNENCODABLE'
  | 'DEPENDENCY_UNAVAILABLE'
  | 'APPEND_DEADLINE_PASSED'
  | 'ROTATION_IN_PROGRESS';

/** Base of the adapters' errors: an {@link AppError} whose code is one of {@link LibErrorCode}. */
abstract class LibError extends AppError {
  declare readonly code: LibErrorCode;

  constructor(code: LibErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, options);
  }
}

/** Invalid configuration; the process stops at start-up with this message. */
export class ConfigError extends LibError {
  constructor(message: string) {
    super('CONFIG_INVALID', message);
  }
}

/** A record on a topic that cannot be decoded (bad framing, unknown schema id, bad Avro body). */
export class DecodeError extends LibError {
  constructor(message: string, cause?: unknown) {
    super('RECORD_UNDECODABLE', message, { cause });
  }
}

/** A value that cannot be encoded with its schema. */
export class EncodeError extends LibError {
  constructor(message: string, cause?: unknown) {
    super('RECORD_UNENCODABLE', message, { cause });
  }
}

/** A dependency (database, broker) is unreachable; the request may succeed later. */
export class UnavailableError extends LibError {
  constructor(message: string, cause?: unknown) {
    super('DEPENDENCY_UNAVAILABLE', message, { cause, retryable: true });
  }
}

/**
 * A record refused before it was sent: its deadline (Unix ms) passed while it waited for an append
 * in flight (lib/log/batching-appender.ts). Nothing of it is on the log.
 */
export class AppendDeadlineError extends LibError {
  readonly deadline: number;

  constructor(deadline: number, now: number) {
    super(
      'APPEND_DEADLINE_PASSED',
      `not appended: its deadline ${new Date(deadline).toISOString()} passed while it waited (${now - deadline} ms ago)`,
    );
    this.deadline = deadline;
  }
}

/**
 * A signing-secret rotation refused because the secret a previous rotation replaced still signs
 * (lib/db/operator-config.ts `rotateSigningSecret`): rotating again would drop it before its overlap
 * ends, cutting off an operator that still verifies with it.
 */
export class RotationInProgressError extends LibError {
  /**
   * @param previousValidUntil until when the replaced secret still signs, Unix ms.
   */
  constructor(readonly previousValidUntil: number) {
    super(
      'ROTATION_IN_PROGRESS',
      `a signing-secret rotation is in its overlap: the previous secret is valid until ${new Date(previousValidUntil).toISOString()}; rotate after that, or with force to drop it at once`,
    );
  }
}
