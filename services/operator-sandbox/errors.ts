/**
 * Errors of the operator sandbox and the one place where they become answers (docs/conventions.md §6): a code,
 * a message and the HTTP status of the `http-status` preset here; the body and status of the preset
 * being played in presets.ts (`{ error: { code, message } }` under `http-status` and `seed`, a
 * `status` under `status-in-body`).
 */
import type { FastifyError, FastifyReply } from 'fastify';
import { isConnectionError } from '../../lib/db/pool.ts';
import { AppError } from '../../lib/errors.ts';
import type { AnswerPreset } from '../../rules/wallet/answers.ts';
import { errorAnswer } from './presets.ts';

/** Refusal codes of the callback contract and their HTTP statuses under the `http-status` preset. */
export const STATUS_OF = {
  BAD_REQUEST: 400,
  INVALID_SIGNATURE: 401,
  INSUFFICIENT_FUNDS: 402,
  NOT_FOUND: 404,
  IDEMPOTENCY_CONFLICT: 409,
  BET_ROLLED_BACK: 409,
  BET_NOT_FOUND: 409,
  /** A rollback of a bet already settled by a win (or a zero-amount round close): no refund. */
  BET_SETTLED: 409,
} as const;

export type SandboxCode = keyof typeof STATUS_OF;

/** Codes of the sandbox's own admin routes (not refusals of the callback contract) and their HTTP statuses. */
export const ADMIN_STATUS_OF = {
  /** GET /_sandbox/ledger of a player and currency without an account. */
  ACCOUNT_NOT_FOUND: 404,
} as const;

/** Every code a SandboxError carries; a code not listed here does not compile. */
export type SandboxErrorCode = SandboxCode | keyof typeof ADMIN_STATUS_OF;

const HTTP_STATUS_OF: Readonly<Record<SandboxErrorCode, number>> = { ...STATUS_OF, ...ADMIN_STATUS_OF };

/** An expected refusal; nothing was written when it is thrown. */
export class SandboxError extends AppError {
  declare readonly code: SandboxErrorCode;

  constructor(code: SandboxErrorCode, message: string) {
    super(code, message);
  }
}

export { errorBody } from './presets.ts';

/** What an error a route throws comes to: its code, message and HTTP status (`http-status` preset). */
export function errorOf(err: unknown): { code: string; message: string; status: number } {
  if (err instanceof SandboxError)
    return { code: err.code, message: err.message, status: HTTP_STATUS_OF[err.code] };
  const status = (err as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return { code: 'BAD_REQUEST', message: (err as Error).message, status };
  if (isConnectionError(err))
    return { code: 'UNAVAILABLE', message: 'ledger database unreachable', status: 503 };
  return { code: 'INTERNAL', message: 'internal error', status: 500 };
}

/**
 * Sends the answer to any error a route throws, as an operator of `preset` answers it: a
 * SandboxError by its code, a fastify client error (415, 413, …) as BAD_REQUEST, an unreachable
 * database as UNAVAILABLE (503), anything else INTERNAL (500, logged).
 */
export function replyForError(
  err: unknown,
  reply: FastifyReply,
  preset: AnswerPreset = 'http-status',
): FastifyReply {
  const e = errorOf(err);
  if (e.code === 'INTERNAL') reply.log.error({ err }, 'sandbox request failed');
  const answer = errorAnswer(preset, e.code, e.message, e.status);
  return reply.code(answer.status).send(answer.body);
}
