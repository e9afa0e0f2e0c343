/**
 * The error form of every HTTP listener (issue 13 item 5): seed 000's `{error, success: false}`
 * with its CORS headers, also for the errors fastify answers itself before any hook runs (a
 * malformed percent-encoding in the path, a path parameter over the router's limit), which would
 * otherwise go out as fastify's own `{error, code, message, statusCode}` without CORS.
 * The API's session routes answer RFC 7807 problem JSON instead (services/api/errors.ts); the
 * WebTransport edge (Deno, no fastify) writes the same body and headers itself.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** CORS headers of seed 000 ("REST": on every endpoint). */
export const SEED_CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type',
};

/** Texts of the errors fastify raises before routing. */
export const MALFORMED_URL_TEXT = 'Malformed URL: invalid percent-encoding';
export const PARAM_TOO_LONG_TEXT = 'Path parameter too long';

/** The body of every error: `{error, success: false}`. */
export function errorBody(error: string): { error: string; success: false } {
  return { error, success: false };
}

/**
 * Status and text of an error fastify raises before routing (its `frameworkErrors` option):
 * FST_ERR_BAD_URL → 400; FST_ERR_MAX_PARAM_LENGTH → 400 (a too-long slug is a malformed one, as the
 * API answers it); anything else → its own 4xx status, or 500.
 */
export function frameworkError(err: FastifyError): { status: number; error: string } {
  if (err.code === 'FST_ERR_BAD_URL') return { status: 400, error: MALFORMED_URL_TEXT };
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return { status: 400, error: PARAM_TOO_LONG_TEXT };
  const sc = err.statusCode;
  if (typeof sc === 'number' && sc >= 400 && sc < 500) return { status: sc, error: err.message };
  return { status: 500, error: 'Internal Server Error' };
}

/**
 * A fastify `frameworkErrors` handler answering in the seed form with `cors` headers
 * (default {@link SEED_CORS_HEADERS}).
 */
export function seedFrameworkErrors(cors: Readonly<Record<string, string>> = SEED_CORS_HEADERS) {
  return (err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void => {
    const { status, error } = frameworkError(err);
    reply.code(status).headers(cors).send(errorBody(error));
  };
}
