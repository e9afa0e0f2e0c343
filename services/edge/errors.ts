/**
 * The one place where errors become answers of the edge's HTTP server (docs/conventions.md §6):
 * errors fastify raises (the edge's error handler, edge.ts) and the gRPC statuses that end a call
 * of the browsers' gRPC proxy before any data (transports/grpc-proxy/plugin.ts). Bodies are
 * docs/contract.md's `{error, success: false}` (plus `reason` for 401/403/429), with CORS.
 * Verdicts of the stream access (sse.ts, ws.ts) are answers, not errors, and are written there.
 * gRPC statuses of the edge's own gRPC server are transports/grpc/errors.ts's.
 */
import { type ServiceError, status } from '@grpc/grpc-js';
import type { FastifyError } from 'fastify';
import { errorBody, frameworkError, SEED_CORS_HEADERS } from '../../lib/http/error-form.ts';
import { HTTP_ERROR } from '../../lib/stream/access.ts';

/** An error answer of the edge's HTTP server. */
export interface EdgeErrorReply {
  readonly status: number;
  /** CORS headers, and `Retry-After` (s) when the gRPC details name a wait. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly error: string; readonly success: false; readonly reason?: string | undefined };
}

/** HTTP status for a gRPC status that ends a call before any data. */
const HTTP_OF: Partial<Record<status, number>> = {
  [status.NOT_FOUND]: 404,
  [status.INVALID_ARGUMENT]: 400,
  [status.UNAUTHENTICATED]: 401,
  [status.PERMISSION_DENIED]: 403,
  [status.RESOURCE_EXHAUSTED]: 429,
};

/** The HTTP status of gRPC status `code`: NOT_FOUND 404, INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, RESOURCE_EXHAUSTED 429, anything else 502. */
export function httpStatusOf(code: status): number {
  return HTTP_OF[code] ?? 502;
}

/** Whether `err` is a gRPC client's ServiceError (a numeric gRPC `code` and `details`). */
function isServiceError(err: unknown): err is ServiceError {
  const e = err as Partial<ServiceError> | null | undefined;
  return typeof e?.code === 'number' && typeof e.details === 'string';
}

/**
 * The answer to `err`:
 * - a gRPC ServiceError (the proxy's call ended before any data) → {@link httpStatusOf}, CORS `*`;
 *   401/403/429 with the standard text and the `reason` the gRPC server put at the end of its
 *   details (`(<reason>)`), and `Retry-After` from its `retry after N s`; 400/404 with the gRPC
 *   server's own text (meant for clients); 502 naming only the gRPC status;
 * - anything else, as fastify raised it → lib/http/error-form.ts frameworkError (its 4xx status
 *   and message, or 500 Internal Server Error), with docs/contract.md's CORS headers.
 */
export function httpReplyForError(err: unknown): EdgeErrorReply {
  if (isServiceError(err)) {
    const http = httpStatusOf(err.code);
    const cors = { 'Access-Control-Allow-Origin': '*' };
    if (http === 401 || http === 403 || http === 429) {
      // service.ts ends these details with `(<reason>)`.
      const reason = /\((\w+)\)$/.exec(err.details)?.[1];
      const retry = /retry after (\d+) s/.exec(err.details)?.[1];
      return {
        status: http,
        headers: retry ? { ...cors, 'Retry-After': retry } : cors,
        body: { error: HTTP_ERROR[http], success: false, reason },
      };
    }
    const error = http === 502 ? `Bad Gateway (gRPC ${status[err.code]})` : err.details;
    return { status: http, headers: cors, body: { error, success: false } };
  }
  const { status: sc, error } = frameworkError(err as FastifyError);
  return { status: sc, headers: SEED_CORS_HEADERS, body: errorBody(error) };
}
