/**
 * Prometheus metrics of the settlement processor (docs/conventions.md §12). Its consumer lag per partition of
 * both topics is the common `kafka_consumer_lag{consumer="settlement"}` (lib/log/consumer-lag.ts).
 */
import { Counter, type Registry } from 'prom-client';

export interface SettlementMetrics {
  /** The registry the counters are in. */
  readonly registry: Registry;
  /** Events appended by settlement, by type and outcome (won/lost for BetSettled, else ''). */
  readonly appended: Counter<'type' | 'outcome'>;
  /** Records settled in committed writes, by topic (result `processed`; records that can never be written are counted as dead-lettered by the consumer metrics). */
  readonly records: Counter<'topic' | 'result'>;
  /**
   * RoundFinished records settlement refused and settled nothing with (rules/rounds/admission.ts),
   * by reason: `future`, `past`, `duplicate`, `conflict`.
   */
  readonly refused: Counter<'reason'>;
}

/** Registers the counters in `registry`. */
export function createSettlementMetrics(registry: Registry): SettlementMetrics {
  return {
    registry,
    appended: new Counter({
      name: 'settlement_events_appended_total',
      help: 'Events appended by settlement, by type and outcome',
      labelNames: ['type', 'outcome'],
      registers: [registry],
    }),
    records: new Counter({
      name: 'settlement_records_total',
      help: 'Records settled in committed writes, by topic and result (processed)',
      labelNames: ['topic', 'result'],
      registers: [registry],
    }),
    refused: new Counter({
      name: 'settlement_refused_rounds_total',
      help: 'RoundFinished records of rounds refused by the admission rule and not settled with, by reason (future, past, duplicate, conflict)',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}
