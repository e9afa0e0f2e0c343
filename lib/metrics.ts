/**
 * What every service's Prometheus registry shares (docs/conventions.md §12): prom-client's default process
 * metrics (`process_*`, `nodejs_*`) and a `service` default label on every series, so one
 * dashboard tells the services apart whatever the scrape job is called. The HTTP request
 * histogram of the fastify services is in http-metrics.ts (this module is also loaded by the Deno
 * WebTransport edge, which has no fastify).
 *
 * Naming follows the Prometheus guidelines (prometheus.io "Metric and label naming"): base units
 * in the name (`_seconds`, `_bytes`), `_total` on counters, bounded label values only.
 */
import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** The deployables that serve /metrics, as their `service` label reads. */
export const SERVICES = [
  'round-engine',
  'projector',
  'api',
  'edge',
  'edge-webtransport',
  'gateway',
  'settlement',
  'wallet-saga',
  'operator-sandbox',
  'bots',
] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * A new registry with the default process metrics and `service="<service>"` on every series.
 * One per service instance (tests build several in one process, so nothing goes to the global
 * registry).
 */
export function createServiceRegistry(service: ServiceName): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  if (!procReadable()) useMemoryUsage(registry);
  return registry;
}

/** Whether prom-client's Linux process metrics can read /proc/self (not elsewhere, nor in Deno without --allow-all). */
function procReadable(): boolean {
  if (process.platform !== 'linux') return true; // prom-client uses process.memoryUsage() there
  try {
    readFileSync('/proc/self/status', 'utf8');
    return true;
  } catch {
    return false;
  }
}

/**
 * Replaces the /proc-based memory and descriptor gauges, which would read 0 for ever, with the
 * resident set size from `process.memoryUsage()` (the Deno WebTransport edge, whose sandbox
 * refuses /proc/self without --allow-all).
 */
function useMemoryUsage(registry: Registry): void {
  for (const name of [
    'process_resident_memory_bytes',
    'process_virtual_memory_bytes',
    'process_heap_bytes',
    'process_open_fds',
    'process_max_fds',
  ])
    registry.removeSingleMetric(name);
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().rss);
    },
  });
}
