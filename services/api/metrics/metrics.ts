/**
 * Prometheus metrics of the API (docs/conventions.md §12): the common service registry (process metrics,
 * `service="api"`; lib/metrics.ts) and the request-duration histogram
 * `http_request_duration_seconds{method, route, status_code}`, served at GET /metrics. Each app
 * gets its own registry unless the caller passes one (main.ts shares it with the key table's
 * consumer lag), so several instances in one process (tests) do not collide.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { metricsRoute, observeHttpRequests } from '../../../lib/http/metrics.ts';
import { createServiceRegistry } from '../../../lib/metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's registry (GET /metrics), for metrics registered by other parts of the app. */
    metricsRegistry: Registry;
  }
}

/** Adds the duration hook to `app` itself (so it sees every route and 404) and GET /metrics. */
export function registerMetrics(
  app: FastifyInstance,
  registry: Registry = createServiceRegistry('api'),
): void {
  app.decorate('metricsRegistry', registry);
  observeHttpRequests(app, registry);
  metricsRoute(app, registry);
}
