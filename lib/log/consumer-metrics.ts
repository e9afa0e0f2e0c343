/**
 * Prometheus metrics of the checkpointed consumers (docs/conventions.md §12; checkpointed-consumer.ts), shared
 * by every consumer of one process in one registry, each series labelled with its `projection`
 * (the consumer's checkpoint name: rounds, auth-keys, wallet, settlement) and `topic`. The names
 * keep their `projector_` prefix from when only projectors had them (dashboards query them).
 * Consumer lag per partition is the common `kafka_consumer_lag` (consumer-lag.ts), not a metric
 * of its own.
 */
import type { Admin } from 'kafkajs';
import { Counter, Histogram, type Registry } from 'prom-client';
import { createServiceRegistry } from '../metrics.ts';

type Labels = 'projection' | 'topic';

export interface ConsumerMetrics {
  readonly registry: Registry;
  /** Records per Kafka batch handed to a projection. */
  readonly batchSize: Histogram<Labels>;
  /** Events written to the read model in committed transactions. */
  readonly projected: Counter<Labels>;
  /** Records that can never be written (undecodable, or refused by Postgres) sent to the dead-letter topic. */
  readonly deadLettered: Counter<Labels>;
  /** Failed Postgres calls (each one is retried). */
  readonly dbFailures: Counter<Labels>;
  /** Seconds per committed write (one atomic statement each). */
  readonly txSeconds: Histogram<Labels>;
}

const byRegistry = new WeakMap<Registry, ConsumerMetrics>();

/**
 * The consumer metrics of `registry`, created on the first call and shared by later ones (the
 * consumers of one process register once). Without a registry: a new one with the process metrics
 * and `service=<service>`.
 */
export function createConsumerMetrics(
  registry: Registry = createServiceRegistry('projector'),
): ConsumerMetrics {
  const known = byRegistry.get(registry);
  if (known) return known;
  const labelNames = ['projection', 'topic'] as const;
  const registers = [registry];
  const metrics: ConsumerMetrics = {
    registry,
    batchSize: new Histogram({
      name: 'projector_batch_size',
      help: 'Records per Kafka batch received by a projection',
      labelNames,
      buckets: [1, 10, 50, 100, 500, 1000, 2500, 5000, 10000],
      registers,
    }),
    projected: new Counter({
      name: 'projector_records_projected_total',
      help: 'Events written to the read model in committed transactions',
      labelNames,
      registers,
    }),
    deadLettered: new Counter({
      name: 'projector_records_dead_lettered_total',
      help: 'Records that can never be written (undecodable, or refused by Postgres) sent to the dead-letter topic',
      labelNames,
      registers,
    }),
    dbFailures: new Counter({
      name: 'projector_db_failures_total',
      help: 'Failed Postgres calls; each one is retried with backoff',
      labelNames,
      registers,
    }),
    txSeconds: new Histogram({
      name: 'projector_transaction_seconds',
      help: 'Duration of committed writes (one atomic statement each)',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
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
