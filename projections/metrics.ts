/**
 * Prometheus metrics of the projector (STYLE.md §12), in a registry of its own so several
 * projectors (tests) can live in one process.
 */
import type { Admin } from 'kafkajs';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface ProjectorMetrics {
  readonly registry: Registry;
  /** Records per Kafka batch handed to the projector. */
  readonly batchSize: Histogram<'topic'>;
  /** Events written to the read model in committed transactions. */
  readonly projected: Counter<'topic'>;
  /** Undecodable records sent to the dead-letter topic. */
  readonly deadLettered: Counter<'topic'>;
  /** Failed Postgres calls (each one is retried). */
  readonly dbFailures: Counter<'topic'>;
  /** Seconds per committed chunk write. */
  readonly txSeconds: Histogram<'topic'>;
  /** High-water mark minus checkpoint, per partition: records in the log not yet in Postgres. */
  readonly lag: Gauge<'topic' | 'partition'>;
}

/**
 * Creates the metrics in `registry` (a new one when omitted).
 * @param collectLag refreshes the lag gauge when Prometheus scrapes; failures keep the last values.
 */
export function createProjectorMetrics(
  collectLag: () => Promise<void>,
  registry: Registry = new Registry(),
): ProjectorMetrics {
  return {
    registry,
    batchSize: new Histogram({
      name: 'projector_batch_size',
      help: 'Records per Kafka batch received by the projector',
      labelNames: ['topic'],
      buckets: [1, 10, 50, 100, 500, 1000, 2500, 5000, 10000],
      registers: [registry],
    }),
    projected: new Counter({
      name: 'projector_records_projected_total',
      help: 'Events written to the read model in committed transactions',
      labelNames: ['topic'],
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: 'projector_records_dead_lettered_total',
      help: 'Undecodable records sent to the dead-letter topic',
      labelNames: ['topic'],
      registers: [registry],
    }),
    dbFailures: new Counter({
      name: 'projector_db_failures_total',
      help: 'Failed Postgres calls; each one is retried with backoff',
      labelNames: ['topic'],
      registers: [registry],
    }),
    txSeconds: new Histogram({
      name: 'projector_transaction_seconds',
      help: 'Duration of committed chunk writes (one atomic statement each)',
      labelNames: ['topic'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'projector_consumer_lag',
      help: 'High-water mark minus committed checkpoint, per partition (records)',
      labelNames: ['topic', 'partition'],
      registers: [registry],
      async collect() {
        await collectLag().catch(() => {});
      },
    }),
  };
}

/**
 * High-water mark minus the group's committed offset per partition of `topic`, in records; a
 * partition the group never committed counts from its first retained offset.
 * @throws the kafkajs error when the broker cannot be asked.
 */
export async function consumerLag(
  admin: Admin,
  groupId: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const [high, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const done = new Map(committed[0]?.partitions.map((p) => [p.partition, BigInt(p.offset)]) ?? []);
  return new Map(
    high.map((o) => {
      const c = done.get(o.partition) ?? -1n;
      const from = c < 0n ? BigInt(o.low) : c;
      return [o.partition, BigInt(o.high) > from ? BigInt(o.high) - from : 0n];
    }),
  );
}
