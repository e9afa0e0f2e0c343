/**
 * The error form of every HTTP listener: docs/contract.md's `{error, success: false}`
 * with its CORS headers, also for the errors fastify answers itself before any hook runs (a
 * malformed percent-encoding in the path, a path parameter over the router's limit), which would
 * otherwise go out as fastify's own `{error, code, message, statusCode}` without CORS.
 * The API's session routes answer RFC 7807 problem JSON instead (services/api/errors.ts); the
 * WebTransport edge (Deno, no fastify) writes the same body and headers itself.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** CORS headers of docs/contract.md ("REST": on every endpoint). */
export const SEED_CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type',
};

/**
 * Largest request body the API reads, bytes (fastify's default bodyLimit, 1 MiB); the gateway
 * refuses a larger one itself, in the same form, before it is proxied.
 */
export const BODY_LIMIT_BYTES = 1 << 20;

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

/** Path prefixes of the API's session routes (docs/contract.md "Operator callbacks"), whose errors are RFC 7807 problem JSON. */
export const SESSION_API_PREFIXES = ['/games', '/sessions', '/play', '/admin'] as const;

/** Whether `url` (path and query) belongs to the session API rather than docs/contract.md's REST form. */
export function isSessionApiPath(url: string): boolean {
  return SESSION_API_PREFIXES.some((p) => url === p || url.startsWith(`${p}/`) || url.startsWith(`${p}?`));
}

/** Stable codes of the errors fastify raises before routing, as the API's problem JSON names them. */
const FRAMEWORK_CODES: Readonly<Record<string, string>> = {
  FST_ERR_BAD_URL: 'MALFORMED_URL',
  FST_ERR_MAX_PARAM_LENGTH: 'MALFORMED_URL',
};

/**
 * The answer to an error fastify raises before routing, in the form of the path it was meant for:
 * problem JSON on the session API's paths, `{error, success:false}` elsewhere. The API and the
 * gateway (which meets a malformed URL before it can forward it) both answer with it.
 */
export function frameworkErrorReply(
  err: FastifyError,
  url: string,
): { status: number; contentType: string; body: Record<string, unknown> } {
  const { status, error } = frameworkError(err);
  if (!isSessionApiPath(url))
    return { status, contentType: 'application/json; charset=utf-8', body: errorBody(error) };
  const code = status < 500 ? FRAMEWORK_CODES[err.code] : undefined;
  return {
    status,
    contentType: 'application/problem+json',
    body: {
      type: code ? `urn:casino:problem:${code.toLowerCase().replaceAll('_', '-')}` : 'about:blank',
      title: STATUS_CODES[status] ?? 'Bad Request',
      status,
      detail: error,
      ...(code ? { code } : {}),
    },
  };
}

/**
 * A fastify `frameworkErrors` handler answering with {@link frameworkErrorReply} and `cors` headers
 * (default {@link SEED_CORS_HEADERS}).
 */
export function seedFrameworkErrors(cors: Readonly<Record<string, string>> = SEED_CORS_HEADERS) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const r = frameworkErrorReply(err, req.url);
    reply.code(r.status).headers(cors).type(r.contentType).send(r.body);
  };
}
