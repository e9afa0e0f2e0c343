/**
 * Prometheus metrics of the wallet saga (STYLE.md §12), in a registry of its own so several
 * sagas (tests) can live in one process. Its consumer lag per partition and the parked callbacks
 * not yet replayed are the common `kafka_consumer_lag` (consumers `wallet-saga` and
 * `wallet-replay`; lib/log/consumer-lag.ts).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createServiceRegistry } from '../../lib/metrics.ts';

export interface SagaMetrics {
  readonly registry: Registry;
  /** Finished callbacks by kind (bet, win, rollback) and outcome (ok, refused, failed, parked). */
  readonly callbacks: Counter<'kind' | 'outcome'>;
  /** HTTP attempts by kind and verdict (ok, refused, failed). */
  readonly attempts: Counter<'kind' | 'verdict'>;
  /** Retries scheduled (attempts after the first) by kind. */
  readonly retries: Counter<'kind'>;
  /** Callbacks parked on the dead-letter topic by kind. */
  readonly parked: Counter<'kind'>;
  /** Records admitted and not yet finished. */
  readonly inFlight: Gauge;
  /** Seconds per HTTP attempt by kind. */
  readonly attemptSeconds: Histogram<'kind'>;
}

/** Creates the metrics in `registry` (when omitted, a new one with the process metrics and `service="wallet-saga"`). */
export function createSagaMetrics(registry: Registry = createServiceRegistry('wallet-saga')): SagaMetrics {
  const registers = [registry];
  return {
    registry,
    callbacks: new Counter({
      name: 'wallet_saga_callbacks_total',
      help: 'Finished operator callbacks by kind and outcome (ok, refused, failed, parked)',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    attempts: new Counter({
      name: 'wallet_saga_callback_attempts_total',
      help: 'HTTP callback attempts by kind and verdict',
      labelNames: ['kind', 'verdict'],
      registers,
    }),
    retries: new Counter({
      name: 'wallet_saga_retries_total',
      help: 'Callback retries scheduled (attempts after the first)',
      labelNames: ['kind'],
      registers,
    }),
    parked: new Counter({
      name: 'wallet_saga_parked_total',
      help: 'Callbacks whose retries were used up, copied to the dead-letter topic',
      labelNames: ['kind'],
      registers,
    }),
    inFlight: new Gauge({
      name: 'wallet_saga_in_flight',
      help: 'Records admitted by the saga and not yet finished',
      registers,
    }),
    attemptSeconds: new Histogram({
      name: 'wallet_saga_callback_seconds',
      help: 'Duration of one HTTP callback attempt',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}
