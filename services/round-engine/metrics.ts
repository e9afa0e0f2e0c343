/**
 * Prometheus metrics of the round engine (docs/conventions.md §12), on a registry of its own so several
 * engines in one process (tests) do not collide.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { createServiceRegistry } from '../../lib/metrics.ts';

export interface EngineMetrics {
  readonly registry: Registry;
  /** Rounds appended to the log, by game. */
  readonly appended: Counter<'game'>;
  /** Time from the round's finish to the broker's acknowledgement, seconds, by game. */
  readonly appendLatency: Histogram<'game'>;
  /** Failed send attempts that were retried (broker down, leader moved), by game. */
  readonly sendRetries: Counter<'game'>;
}

/** A fresh registry with the process metrics, `service="round-engine"` and the engine's own. */
export function createMetrics(): EngineMetrics {
  const registry = createServiceRegistry('round-engine');
  return {
    registry,
    appended: new Counter({
      name: 'round_engine_rounds_appended_total',
      help: 'Rounds appended to the rounds topic',
      labelNames: ['game'],
      registers: [registry],
    }),
    appendLatency: new Histogram({
      name: 'round_engine_append_latency_seconds',
      help: 'From round finish to broker acknowledgement, including retries',
      labelNames: ['game'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    sendRetries: new Counter({
      name: 'round_engine_send_retries_total',
      help: 'Send attempts that failed after the client retries and were retried',
      labelNames: ['game'],
      registers: [registry],
    }),
  };
}
