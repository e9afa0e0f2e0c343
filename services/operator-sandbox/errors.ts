/**
 * Errors of the operator sandbox and the one place where they become HTTP statuses (STYLE.md §6).
 * Every refusal has the body of the issue-5 contract: `{ error: { code, message } }`.
 */
import type { FastifyError, FastifyReply } from 'fastify';
import { isConnectionError } from '../../lib/db/pool.ts';
import { AppError } from '../../lib/errors.ts';

/** Refusal codes of the callback contract (docs: /work/notes/issue5-contract.md "Refusals"). */
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

/** An expected refusal; nothing was written when it is thrown. */
export class SandboxError extends AppError {
  declare readonly code: SandboxCode;

  constructor(code: SandboxCode, message: string) {
    super(code, message);
  }
}

/** The error body of the contract. */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/**
 * Status and body for any error a route throws: a SandboxError by its code, a fastify client
 * error (415, 413, …) as 400-class BAD_REQUEST, an unreachable database as 503, anything else 500.
 */
export function replyForError(err: unknown, reply: FastifyReply): FastifyReply {
  if (err instanceof SandboxError)
    return reply.code(STATUS_OF[err.code]).send(errorBody(err.code, err.message));
  const status = (err as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return reply.code(status).send(errorBody('BAD_REQUEST', (err as Error).message));
  }
  if (isConnectionError(err))
    return reply.code(503).send(errorBody('UNAVAILABLE', 'ledger database unreachable'));
  reply.log.error({ err }, 'sandbox request failed');
  return reply.code(500).send(errorBody('INTERNAL', 'internal error'));
}
