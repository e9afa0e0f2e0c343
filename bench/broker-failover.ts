/**
 * How long one game stands still when the broker leading its partition dies: the round engine's own
 * appender (services/round-engine/appender.ts: idempotent producer, acks from all in-sync replicas,
 * retried with SEND_RETRY) appends a round every `--interval-ms` to a topic of a private three-node
 * cluster (tests/support/private-infra.ts, replication 3, min.insync.replicas 2); the node leading
 * the partition is SIGKILLed, started again once appends flow without it, `--kills` times. Prints,
 * per kill, the longest gap between two acknowledged appends and the whole run's median gap.
 *
 * Usage: `npx tsx bench/broker-failover.ts [--failover tuned|kafka-defaults] [--kills 3]
 * [--interval-ms 100]` (about 1 minute per kill plus the cluster's start). `--failover` is
 * scripts/kafka.sh KAFKA_FAILOVER: this project's failure-detection timeouts or Kafka's own.
 * BENCH_LOG_LEVEL=info prints the client's logs (kafkajs' retries) as JSON lines.
 */
import { parseArgs } from 'node:util';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { createAppender } from '../services/round-engine/appender.ts';
import { createMetrics } from '../services/round-engine/metrics.ts';
import { loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { startPrivateKafkaCluster } from '../tests/support/private-infra.ts';
import { uniqueId } from '../tests/support/processes.ts';
import { mkRound } from '../tests/support/rounds-fixture.ts';

const { values } = parseArgs({
  options: {
    failover: { type: 'string', default: 'tuned' },
    kills: { type: 'string', default: '3' },
    'interval-ms': { type: 'string', default: '100' },
  },
});
const failover = values.failover;
if (failover !== 'tuned' && failover !== 'kafka-defaults')
  throw new Error('--failover: tuned or kafka-defaults');
const kills = Number(values.kills);
const intervalMs = Number(values['interval-ms']);
/** Appends acknowledged without the killed node before it is started again. */
const APPENDS_WHILE_DOWN = 30;

const cluster = await startPrivateKafkaCluster(3, { KAFKA_FAILOVER: failover });
const logger = createLogger(
  'broker-failover',
  (process.env.BENCH_LOG_LEVEL as 'info' | undefined) ?? 'silent',
);
try {
  const config = loadConfig({
    ...process.env,
    KAFKA_BROKERS: cluster.brokers,
    TOPIC_NAMESPACE: `${uniqueId('failover-')}-`,
  });
  const kafka = createKafka(config, 'broker-failover', logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds']);
  const topic = topicName(config, 'rounds');
  const appender = createAppender({
    kafka,
    topic,
    slug: 'crash',
    logger,
    metrics: createMetrics(),
    // A re-send after a failed one is deduplicated by the idempotent producer's sequence.
    landed: async () => false,
    clock: Date.now,
  });
  await appender.connect();
  const acked: number[] = [];
  const stop = new AbortController();
  const loop = (async () => {
    for (let seq = 1; !stop.signal.aborted; seq++) {
      const started = Date.now();
      const ok = await appender.append(mkRound('crash', seq, '2.00'), stop.signal).then(
        () => true,
        () => false,
      );
      if (ok) acked.push(Date.now());
      await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (Date.now() - started))));
    }
  })();
  // The partition of the key `crash` (the appender's only key): found as the one with records.
  await waitFor('first appends', () => (acked.length >= 20 ? true : undefined), 60_000, 100);
  const offsets = await admin.fetchTopicOffsets(topic);
  const partition = offsets.find((o) => o.high !== '0')?.partition ?? 0;
  const leaderOf = async (): Promise<number> => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader ?? -1;
  };
  const results: { node: number; gapMs: number; downMs: number }[] = [];
  for (let k = 0; k < kills; k++) {
    const node = await waitFor(
      'a leader',
      async () => ((await leaderOf()) > 0 ? leaderOf() : undefined),
      60_000,
      200,
    );
    const from = acked.length;
    const killedAt = Date.now();
    cluster.kill(node);
    await waitFor(
      'appends without the node',
      () => (acked.length >= from + APPENDS_WHILE_DOWN ? true : undefined),
      180_000,
      50,
    );
    const downMs = Date.now() - killedAt;
    await cluster.startNode(node);
    const window = acked.slice(Math.max(0, from - 1));
    let gapMs = 0;
    for (let i = 1; i < window.length; i++)
      gapMs = Math.max(gapMs, (window[i] as number) - (window[i - 1] as number));
    results.push({ node, gapMs, downMs });
    console.log(
      `kill ${k + 1}: node ${node} (leader of partition ${partition}), longest gap between appends ${gapMs} ms`,
    );
  }
  stop.abort();
  await loop;
  await appender.close();
  const gaps = acked
    .slice(1)
    .map((t, i) => t - (acked[i] as number))
    .sort((a, b) => a - b);
  console.log(
    `broker failover (${failover}): ${acked.length} appends every ${intervalMs} ms, median gap ${gaps[Math.floor(gaps.length / 2)]} ms; longest gap per kill ${results.map((r) => r.gapMs).join(', ')} ms`,
  );
  await admin.disconnect();
} finally {
  await cluster.close();
}
