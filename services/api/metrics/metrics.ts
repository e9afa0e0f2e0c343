/**
 * Prometheus metrics of the API (STYLE.md §12): prom-client's default process metrics and a
 * request-duration histogram labelled by method, route pattern and status, served at
 * GET /metrics. Each app gets its own registry, so several instances in one process (tests)
 * do not collide.
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's registry (GET /metrics), for metrics registered by other parts of the app. */
    metricsRegistry: Registry;
  }
}

/** Seconds; spans a cached read (sub-ms) to a database timeout (5 s connect timeout). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Adds the duration hook to `app` itself (so it sees every route and 404) and GET /metrics. */
export function registerMetrics(app: FastifyInstance): void {
  const register = new Registry();
  app.decorate('metricsRegistry', register);
  collectDefaultMetrics({ register });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests in seconds, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: BUCKETS,
    registers: [register],
  });

  app.addHook('onResponse', async (req, reply) => {
    // The route pattern, never the raw URL, keeps label cardinality bounded.
    const route = req.routeOptions.url ?? 'unmatched';
    duration.observe(
      { method: req.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(register.contentType);
    return register.metrics();
  });
}
