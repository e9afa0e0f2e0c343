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
