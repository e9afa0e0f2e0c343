/**
 * Base error of the project (STYLE.md §6): a stable string `code`, an optional `cause`, and a
 * `retryable` flag that retry policies read. HTTP statuses are assigned in one place per
 * service (the API's error handler), never where the error is thrown.
 */
export class AppError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

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
