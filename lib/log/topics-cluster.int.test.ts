/**
 * Topic creation on a fresh three-node cluster (a private one, tests/support/private-infra.ts): the
 * way `npm start` met it, topics created right after the cluster answers. A broker whose metadata
 * lags the controller answered "This server does not host this topic-partition" to the leader wait
 * of createTopics, and the start stopped. Every set of topics is created, at replication 3 with
 * `min.insync.replicas` 2 (the cluster has three brokers and TOPIC_REPLICATION_FACTOR is unset).
 */
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { type PrivateKafkaCluster, startPrivateKafkaCluster } from '../../tests/support/private-infra.ts';
import { uniqueId } from '../../tests/support/processes.ts';
import { createLogger } from '../logger.ts';
import { createKafka } from './kafka.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from './topics.ts';

const { ConfigResourceTypes } = kafkajs;
/** Sets of topics created one after another from the cluster's start (each by a fresh client, as each start-up step makes its own). */
const NAMESPACES = 6;

let cluster: PrivateKafkaCluster | undefined;

beforeAll(async () => {
  cluster = await startPrivateKafkaCluster(3);
}, 180_000);

afterAll(async () => {
  await cluster?.close();
}, 120_000);

describe('ensureTopics on a fresh three-broker cluster', () => {
  it('creates every topic right after the start, at replication 3 with min.insync.replicas 2', async () => {
    const brokers = (cluster as PrivateKafkaCluster).brokers;
    const failures: string[] = [];
    const configs = [];
    for (let i = 0; i < NAMESPACES; i++) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        KAFKA_BROKERS: brokers,
        TOPIC_NAMESPACE: `${uniqueId('fresh-')}-`,
      };
      delete env.TOPIC_REPLICATION_FACTOR;
      const config = loadConfig(env);
      configs.push(config);
      const admin = createKafka(config, `fresh-${i}`, createLogger('test', 'silent')).admin();
      await admin.connect();
      try {
        await ensureTopics(admin, config);
      } catch (err) {
        failures.push(`namespace ${i}: ${(err as Error).message}`);
      } finally {
        await admin.disconnect();
      }
    }
    expect(failures).toEqual([]);

    const config = configs[0] as (typeof configs)[number];
    const admin = createKafka(config, 'fresh-check', createLogger('test', 'silent')).admin();
    await admin.connect();
    try {
      const names = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      const replicas = Object.fromEntries(
        topics.map((t) => [t.name, [...new Set(t.partitions.map((p) => p.replicas.length))]]),
      );
      expect(replicas).toEqual(Object.fromEntries(names.map((n) => [n, [3]])));
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name })),
      });
      for (const r of described.resources)
        expect([
          r.resourceName,
          r.configEntries.find((c) => c.configName === 'min.insync.replicas')?.configValue,
        ]).toEqual([r.resourceName, '2']);
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
