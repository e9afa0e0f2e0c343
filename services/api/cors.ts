/**
 * CORS on every response and preflight (docs/contract.md "REST": Access-Control-Allow-Origin `*`,
 * Access-Control-Allow-Methods `GET, POST, OPTIONS`, Access-Control-Allow-Headers `Content-Type`).
 *
 * @fastify/cors answers preflights (204) and sets the origin on every response, but writes the
 * methods and headers only on preflights; the seed wants all three on every response, so one
 * root hook adds the other two. Any OPTIONS request is a preflight (no strict Origin check), so
 * `curl -X OPTIONS` sees what a browser sees.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

export const CORS_ALLOW_ORIGIN = '*';
export const CORS_ALLOW_METHODS = 'GET, POST, OPTIONS';
/** Content-Type of the seed, plus the two credential headers of docs/contract.md "Authentication" 2. */
export const CORS_ALLOW_HEADERS = 'Content-Type, X-API-Key, Authorization';
/** Response headers a cross-origin page may read (the rate-limit budget, for polite polling). */
export const CORS_EXPOSE_HEADERS = 'X-Ratelimit-Limit, X-Ratelimit-Remaining, X-Ratelimit-Reset, Retry-After';

/** Adds the CORS headers to every response of `app` (routes, errors, 404s, static files). */
export async function registerCors(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (_req, reply) => {
    reply.header('Access-Control-Allow-Methods', CORS_ALLOW_METHODS);
    reply.header('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
  });
  await app.register(cors, {
    origin: CORS_ALLOW_ORIGIN,
    methods: CORS_ALLOW_METHODS,
    allowedHeaders: CORS_ALLOW_HEADERS,
    exposedHeaders: CORS_EXPOSE_HEADERS,
    strictPreflight: false,
    optionsSuccessStatus: 204,
    maxAge: 600,
  });
}
