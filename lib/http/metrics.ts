/**
 * The HTTP request histogram of the fastify services (api, gateway, operator-sandbox): one name and
 * label set everywhere, `http_request_duration_seconds{method, route, status_code}` (Prometheus
 * naming: base unit in the name), and their GET /metrics route.
 */
import type { FastifyInstance } from 'fastify';
import { Histogram, type Registry } from 'prom-client';

/** Seconds; spans a cached read (sub-ms) to a database timeout (5 s connect timeout). */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Observes every response of `app` (added on the app itself, so it sees every route and 404s) in
 * `http_request_duration_seconds{method, route, status_code}`. `route` is the route pattern
 * (`/api/history/:game`), never the raw URL, so label values stay bounded; unmatched requests
 * count as `unmatched`. A long-lived stream (SSE through the gateway) is observed when it ends.
 */
export function observeHttpRequests(app: FastifyInstance, registry: Registry): void {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests in seconds, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    duration.observe(
      { method: req.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}

/** GET /metrics on `app`, serving `registry` (hidden from OpenAPI). */
export function metricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
