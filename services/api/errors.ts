/**
 * Errors of the REST API and the one place where errors become HTTP statuses and bodies
 * (docs/conventions.md §6). Handlers and hooks throw; `replyForError` decides status and text.
 *
 * Body of every error (docs/contract.md "Errors"): `{ error: string, success: false }`.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import { isConnectionError } from '../../lib/db/pool.ts';
import { AppError, UnavailableError } from '../../lib/errors.ts';
import type { Refusal } from '../../rules/rounds/publishing.ts';

/** Codes of {@link InvalidInputError} (400): which input was malformed. */
export type InvalidInputCode =
  | 'INVALID_INPUT'
  | 'INVALID_SELECTION'
  | 'INVALID_KEY'
  | 'INVALID_BROWSER_KEY'
  | 'INVALID_ROUND'
  | 'INVALID_GAME_SLUG'
  | 'INVALID_GAME_TYPE'
  | 'INVALID_LIMIT'
  | Refusal['code'];

/** Codes of {@link NotFoundError} (404): what was not found. */
export type NotFoundCode =
  /** No route has this method and path. */
  | 'ROUTE_NOT_FOUND'
  | 'GAME_NOT_FOUND'
  | 'GAME_TYPE_NOT_FOUND'
  | 'NO_ROUNDS_YET'
  | 'SESSION_NOT_FOUND'
  | 'BET_NOT_FOUND'
  | 'OPERATOR_NOT_FOUND'
  | 'LAUNCH_NOT_FOUND'
  | 'CALLBACK_NOT_FOUND'
  | 'KEY_NOT_FOUND'
  /** Ops console: no such topic (dead-letter topic) of the platform, record, or rebuild. */
  | 'TOPIC_NOT_FOUND'
  | 'RECORD_NOT_FOUND'
  | 'REBUILD_NOT_FOUND';

/** Codes of {@link ConflictError} (409): what the write contradicts. */
export type ConflictCode =
  | 'BETTING_CLOSED'
  | 'NO_FREE_BET'
  | 'ALREADY_CASHED_OUT'
  | 'CRASHED'
  | 'NOT_A_CRASH_BET'
  | 'FLIGHT_NOT_STARTED'
  | 'ROUND_FINISHED'
  | 'LAST_ADMIN_KEY'
  | 'ROUND_CONFLICT'
  /** Ops console: a rebuild of the read model is already running; the rebuild is not waiting for its swap. */
  | 'REBUILD_RUNNING'
  | 'REBUILD_NOT_SWAPPABLE'
  /** Operator portal: a signing-secret rotation is still in its overlap (the replaced secret still signs). */
  | 'ROTATION_IN_PROGRESS'
  | Refusal['code'];

/** Codes of {@link GoneError} (410): why the game URL no longer works. */
export type GoneCode = 'LAUNCH_USED' | 'LAUNCH_EXPIRED';

/**
 * Every code an error of the REST and session API carries (the problem JSON's `code`); a code
 * not listed here does not compile.
 */
export type ApiErrorCode =
  | InvalidInputCode
  | NotFoundCode
  | ConflictCode
  | GoneCode
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'INSUFFICIENT_FUNDS'
  | 'OPERATOR_UNAVAILABLE'
  | 'OPERATOR_NOT_READY';

/** The API's base error: an {@link AppError} whose code is one of {@link ApiErrorCode}. */
export abstract class ApiError extends AppError {
  declare readonly code: ApiErrorCode;

  constructor(code: ApiErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, options);
  }
}

/** Malformed request input (path parameter or query); answered 400 with the message as `error`. */
export class InvalidInputError extends ApiError {
  declare readonly code: InvalidInputCode;

  constructor(code: InvalidInputCode, message: string) {
    super(code, message);
  }
}

/** A body in a media type or charset the route does not read (only JSON in UTF-8); answered 415. */
export class UnsupportedMediaTypeError extends ApiError {
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', message);
  }
}

/** A well-formed reference to something that does not exist; answered 404 with the message. */
export class NotFoundError extends ApiError {
  declare readonly code: NotFoundCode;

  constructor(code: NotFoundCode, message: string) {
    super(code, message);
  }
}

/** The per-IP request budget is spent; answered 429. `retryAfterS` is the wait in seconds. */
export class RateLimitedError extends ApiError {
  readonly retryAfterS: number;

  constructor(retryAfterS: number) {
    super('RATE_LIMITED', RATE_LIMITED_TEXT);
    this.retryAfterS = retryAfterS;
  }
}

/**
 * A refused credential (docs/architecture.md: 401 `{error:"Unauthorized", success:false, reason}`, 403
 * `{error:"Forbidden", success:false, reason:"scope"}`). `reason` is lib/auth/verifier.ts's.
 */
export class AuthError extends ApiError {
  readonly status: 401 | 403;
  readonly reason: string;

  /** Shown in the body as `detail` when set: what exactly was refused (e.g. the game a key may not publish). */
  readonly detail: string | undefined;

  constructor(status: 401 | 403, reason: string, message: string, detail?: string) {
    super(status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', message);
    this.status = status;
    this.reason = reason;
    this.detail = detail;
  }
}

/** A write that contradicts what is already recorded (e.g. another round under the same id); 409. */
export class ConflictError extends ApiError {
  declare readonly code: ConflictCode;
  /** Extension members of the problem JSON (RFC 7807 §3.2), e.g. `next_round_opens_at`. */
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(code: ConflictCode, message: string, extensions: Readonly<Record<string, unknown>> = {}) {
    super(code, message);
    this.extensions = extensions;
  }
}

/** A resource that existed but is used up for good (a spent or expired game URL, docs/contract.md "Operator callbacks"); 410. */
export class GoneError extends ApiError {
  declare readonly code: GoneCode;

  constructor(code: GoneCode, message: string) {
    super(code, message);
  }
}

/** The player's (virtual) balance does not cover the stake; 402. */
export class InsufficientFundsError extends ApiError {
  constructor(message: string) {
    super('INSUFFICIENT_FUNDS', message);
  }
}

/** An operator's callback failed or answered something unusable; 502. */
export class BadGatewayError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super('OPERATOR_UNAVAILABLE', message, { cause });
  }
}

/**
 * The operator's wallet is failing and its circuit breaker is open: new bets and
 * sessions of its players are refused at once; 503 with code OPERATOR_UNAVAILABLE and `Retry-After`
 * (`retryAfterS`, whole seconds: the time to the breaker's next probe). With code
 * OPERATOR_NOT_READY: the operator's readiness probe failed, no session is granted.
 */
export class OperatorUnavailableError extends ApiError {
  readonly retryAfterS: number;

  /** `code` OPERATOR_NOT_READY: its readiness probe failed. */
  constructor(
    message: string,
    retryAfterS: number,
    code: 'OPERATOR_UNAVAILABLE' | 'OPERATOR_NOT_READY' = 'OPERATOR_UNAVAILABLE',
  ) {
    super(code, message, { retryable: true });
    this.retryAfterS = retryAfterS;
  }
}

/** Error texts fixed by docs/contract.md ("Errors"). */
export const RATE_LIMITED_TEXT = 'Too many requests, please slow down';
export const INTERNAL_TEXT = 'Internal Server Error';
export const UNAVAILABLE_TEXT = 'Service Unavailable';

/** The JSON error body of every REST error response. */
export interface ErrorBody {
  error: string;
  success: false;
  /** Why a credential was refused (401/403 only). */
  reason?: string;
  /** 403 only, sometimes: what exactly the credential may not do (e.g. publish a game it is not bound to). */
  detail?: string;
}

/** JSON schema of {@link ErrorBody}, registered once as a shared schema for OpenAPI. */
export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Error body of every REST error (docs/contract.md "Errors").',
  required: ['error', 'success'],
  properties: {
    error: { type: 'string', description: 'Human-readable reason, e.g. "Invalid game slug".' },
    success: { type: 'boolean', enum: [false] },
    reason: {
      type: 'string',
      description: '401/403 only: missing, malformed, unknown, expired, revoked, origin, scope or game.',
    },
    detail: {
      type: 'string',
      description: '403 only, when there is more to say: what the credential may not do, naming the game.',
    },
  },
} as const;

export interface ErrorReply {
  readonly status: number;
  readonly body: ErrorBody;
}

/**
 * Maps any thrown value to a status and body. Client errors keep their message; server-side
 * failures get the fixed seed texts so no internal detail leaks.
 * - InvalidInputError and fastify schema-validation errors → 400; UnsupportedMediaTypeError → 415
 * - AuthError → 401/403 with `reason`; ConflictError → 409
 * - NotFoundError → 404; GoneError → 410; InsufficientFundsError → 402
 * - BadGatewayError → 502 with its own message (it names the operator's failure, nothing internal)
 * - RateLimitedError → 429
 * - OperatorUnavailableError → 503 with its own message (the operator's breaker is open)
 * - UnavailableError or a database connection error (lib/db/pool.ts isConnectionError) → 503
 * - other 4xx errors raised by fastify itself (e.g. 415, 413) → their status and message
 * - anything else → 500
 */
export function replyForError(err: unknown): ErrorReply {
  const body = (error: string): ErrorBody => ({ error, success: false });
  if (err instanceof InvalidInputError) return { status: 400, body: body(err.message) };
  if (err instanceof UnsupportedMediaTypeError) return { status: 415, body: body(err.message) };
  if (err instanceof AuthError) {
    const error = err.status === 401 ? 'Unauthorized' : 'Forbidden';
    return {
      status: err.status,
      body: { error, success: false, reason: err.reason, ...(err.detail ? { detail: err.detail } : {}) },
    };
  }
  if (err instanceof ConflictError) return { status: 409, body: body(err.message) };
  if (err instanceof NotFoundError) return { status: 404, body: body(err.message) };
  if (err instanceof GoneError) return { status: 410, body: body(err.message) };
  if (err instanceof InsufficientFundsError) return { status: 402, body: body(err.message) };
  if (err instanceof BadGatewayError) return { status: 502, body: body(err.message) };
  if (err instanceof RateLimitedError) return { status: 429, body: body(RATE_LIMITED_TEXT) };
  if (err instanceof OperatorUnavailableError) return { status: 503, body: body(err.message) };
  if (err instanceof UnavailableError || isConnectionError(err)) {
    return { status: 503, body: body(UNAVAILABLE_TEXT) };
  }
  const fe = err as Partial<FastifyError> | undefined;
  if (fe?.validation) return { status: 400, body: body(fe.message ?? 'Bad Request') };
  const sc = fe?.statusCode;
  if (typeof sc === 'number' && sc >= 400 && sc < 500 && typeof fe?.message === 'string') {
    return { status: sc, body: body(fe.message) };
  }
  return { status: 500, body: body(INTERNAL_TEXT) };
}

/** RFC 7807 problem details: the error body of the session API (docs/contract.md). */
export interface ProblemBody {
  /** `about:blank`, or `urn:casino:problem:<code>` for errors of the application. */
  type: string;
  /** The HTTP reason phrase of `status`. */
  title: string;
  status: number;
  detail: string;
  /** Stable code of the application error (e.g. LAUNCH_USED), when there is one. */
  code?: string;
  /** Why a credential was refused (401/403 only). */
  reason?: string;
}

/** JSON schema of {@link ProblemBody}, registered once as a shared schema for OpenAPI. */
export const problemBodySchema = {
  $id: 'Problem',
  type: 'object',
  description:
    'RFC 7807 problem details (application/problem+json) of every session-API error; some errors add extension members (e.g. `next_round_opens_at` of BETTING_CLOSED).',
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: true,
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    reason: { type: 'string' },
  },
} as const;

/**
 * The same mapping as {@link replyForError}, as RFC 7807 problem details (the session
 * API). Server-side failures keep the fixed texts, so nothing internal leaks here either.
 */
export function problemForError(err: unknown): { status: number; body: ProblemBody } {
  const { status, body } = replyForError(err);
  const code =
    err instanceof AppError && (status < 500 || err instanceof OperatorUnavailableError)
      ? err.code
      : undefined;
  return {
    status,
    body: {
      type: code ? `urn:casino:problem:${code.toLowerCase().replaceAll('_', '-')}` : 'about:blank',
      title: STATUS_CODES[status] ?? (status < 500 ? 'Bad Request' : 'Internal Server Error'),
      status,
      // The seed-000 401 body says only "Unauthorized"; problem JSON carries the reason in detail.
      detail: err instanceof AuthError ? err.message : body.error,
      ...(code ? { code } : {}),
      ...(body.reason ? { reason: body.reason } : {}),
      ...(err instanceof ConflictError ? err.extensions : {}),
    },
  };
}
