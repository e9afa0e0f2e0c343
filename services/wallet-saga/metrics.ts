/**
 * Prometheus metrics of the wallet saga (docs/conventions.md §12), in a registry of its own so several
 * sagas (tests) can live in one process. The processes' consumer lag per partition is the common
 * `kafka_consumer_lag` (consumer `wallet-saga`; lib/log/consumer-lag.ts) and its consumer metrics
 * (lib/log/consumer-metrics.ts) share this registry.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createServiceRegistry } from '../../lib/metrics.ts';

export interface SagaMetrics {
  readonly registry: Registry;
  /** Callbacks asked for by the processes, by kind (bet, win, rollback, close). */
  readonly scheduled: Counter<'kind'>;
  /** Attempts by kind and answer class (ok, duplicate, refused, unknown_transaction, mismatch, failed). */
  readonly attempts: Counter<'kind' | 'answer'>;
  /** Attempts after which the callback is due again (a retry on the schedule), by kind. */
  readonly retries: Counter<'kind'>;
  /** Callbacks parked for ops, by kind. */
  readonly parked: Counter<'kind'>;
  /** Callbacks made due at once because their operator was seen to answer again, by operator. */
  readonly pulledForward: Counter<'operator'>;
  /** Callbacks leased by this instance and not finished. */
  readonly inFlight: Gauge;
  /** Of those, the ones waiting for a send slot of their operator (send-queue.ts; the dispatcher's `waiting`). */
  readonly sendWaiting: Gauge;
  /** Callbacks waiting, by status (due, in_flight, parked), all instances (sampled). */
  readonly waiting: Gauge<'status'>;
  /** Seconds per HTTP attempt by kind. */
  readonly attemptSeconds: Histogram<'kind'>;
  /** Attempts' results stored per statement (dispatcher.ts batches them). */
  readonly finishBatch: Histogram;
  /** Events an invariant kept the process from acting on (rules/wallet/process.ts). */
  readonly violations: Counter;
  /** Breaker state per operator: 1 open, 0 closed. */
  readonly breakerOpen: Gauge<'operator'>;
}

/** Creates the metrics in `registry` (when omitted, a new one with the process metrics and `service="wallet-saga"`). */
export function createSagaMetrics(registry: Registry = createServiceRegistry('wallet-saga')): SagaMetrics {
  const registers = [registry];
  return {
    registry,
    scheduled: new Counter({
      name: 'wallet_saga_callbacks_scheduled_total',
      help: 'Operator callbacks asked for by the bet processes, by kind',
      labelNames: ['kind'],
      registers,
    }),
    attempts: new Counter({
      name: 'wallet_saga_callback_attempts_total',
      help: 'HTTP callback attempts by kind and answer class',
      labelNames: ['kind', 'answer'],
      registers,
    }),
    retries: new Counter({
      name: 'wallet_saga_retries_total',
      help: 'Callback attempts followed by a retry on the schedule',
      labelNames: ['kind'],
      registers,
    }),
    parked: new Counter({
      name: 'wallet_saga_parked_total',
      help: 'Callbacks parked for ops (schedule used up, or an answer ops must look at)',
      labelNames: ['kind'],
      registers,
    }),
    pulledForward: new Counter({
      name: 'wallet_saga_pulled_forward_total',
      help: 'Callbacks waiting for a retry made due at once because their operator answered again',
      labelNames: ['operator'],
      registers,
    }),
    inFlight: new Gauge({
      name: 'wallet_saga_in_flight',
      help: 'Callbacks leased by this instance and not finished',
      registers,
    }),
    sendWaiting: new Gauge({
      name: 'wallet_saga_send_waiting',
      help: 'Callbacks leased by this instance and waiting for a send slot of their operator',
      registers,
    }),
    waiting: new Gauge({
      name: 'wallet_saga_callbacks_waiting',
      help: 'Callbacks by status (due, in_flight, parked), all instances',
      labelNames: ['status'],
      registers,
    }),
    attemptSeconds: new Histogram({
      name: 'wallet_saga_callback_seconds',
      help: 'Duration of one HTTP callback attempt',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    finishBatch: new Histogram({
      name: 'wallet_saga_finish_batch_size',
      help: 'Callback attempt results stored by one statement',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    }),
    violations: new Counter({
      name: 'wallet_saga_invariant_violations_total',
      help: 'Wallet events a money invariant kept the bet process from acting on',
      registers,
    }),
    breakerOpen: new Gauge({
      name: 'wallet_saga_breaker_open',
      help: 'Circuit breaker of each operator: 1 open (new bets refused), 0 closed',
      labelNames: ['operator'],
      registers,
    }),
  };
}
