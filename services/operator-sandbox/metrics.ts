/**
 * Prometheus metrics of the sandbox (docs/conventions.md §12): callbacks by kind, form and answered status
 * (`dropped` when a fault cut the connection), injected faults by mode, and callbacks refused for
 * their signature. Each app has its own
 * registry so several sandboxes in one test process do not collide.
 */
import { Counter, type Registry } from 'prom-client';
import { createServiceRegistry } from '../../lib/metrics.ts';

export interface SandboxMetrics {
  readonly register: Registry;
  readonly callbacks: Counter<'kind' | 'form' | 'status'>;
  readonly faults: Counter<'mode'>;
  /** Callbacks refused because no signature matched the verifying secret. */
  readonly invalidSignatures: Counter;
}

/** A fresh registry with the process metrics, `service="operator-sandbox"` and the sandbox's counters. */
export function createMetrics(): SandboxMetrics {
  const register = createServiceRegistry('operator-sandbox');
  return {
    register,
    callbacks: new Counter({
      name: 'sandbox_callbacks_total',
      help: 'Callbacks received by the operator sandbox, by kind, form (A/B) and HTTP status or "dropped".',
      labelNames: ['kind', 'form', 'status'] as const,
      registers: [register],
    }),
    faults: new Counter({
      name: 'sandbox_faults_injected_total',
      help: 'Faults injected into callbacks, by mode.',
      labelNames: ['mode'] as const,
      registers: [register],
    }),
    invalidSignatures: new Counter({
      name: 'sandbox_invalid_signatures_total',
      help: 'Callbacks refused because no webhook-signature matched the verifying secret (or one was missing).',
      registers: [register],
    }),
  };
}
