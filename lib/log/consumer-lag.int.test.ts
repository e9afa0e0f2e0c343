/**
 * kafka_consumer_lag against the real broker: a consumer that reports its positions reads 0 once
 * caught up; records appended while it is paused show up as lag through the periodic admin read
 * (no batch arrives then) and go back to 0 after it resumes; a group no consumer here runs is
 * followed from its committed offsets; a stopped tracker's series leave the registry.
 */
import type { Consumer, Kafka } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { uniqueId } from '../../tests/support/processes.ts';
import { createLogger } from '../logger.ts';
import { CONSUMER_LAG_METRIC, trackConsumerLag } from './consumer-lag.ts';
import { createKafka } from './kafka.ts';

const logger = createLogger('lag-test', 'silent');
const config = loadConfig(process.env, {});
let kafka: Kafka;
let topic: string;
const consumers: Consumer[] = [];

/** The gauge's samples as `consumer/partition → value`. */
async function samples(registry: Registry): Promise<Map<string, number>> {
  const m = await registry.getSingleMetric(CONSUMER_LAG_METRIC)?.get();
  return new Map(
    (m?.values ?? [])
      .filter((v) => v.labels.topic === topic)
      .map((v) => [`${v.labels.consumer}/${v.labels.partition}`, v.value]),
  );
}

async function append(partition: number, n: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: n }, (_, i) => ({ partition, value: `record ${i}` })),
  });
  await producer.disconnect();
}

beforeAll(async () => {
  kafka = createKafka(config, 'lag-test', logger);
  topic = uniqueId('t-lag-');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  await append(0, 7);
  await append(1, 3);
});

afterAll(async () => {
  for (const c of consumers) await c.disconnect().catch(() => {});
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('kafka_consumer_lag', () => {
  it('is 0 when caught up, counts records appended while paused, and is 0 again after resuming', async () => {
    const registry = new Registry();
    const groupId = uniqueId('t-lag-group-');
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
    consumers.push(consumer);
    const lag = trackConsumerLag({
      kafka,
      registry,
      name: 'test',
      groupId,
      consumer,
      refreshMs: 200,
      logger,
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const last = batch.messages.at(-1);
        if (last) lag.position(batch.topic, batch.partition, BigInt(last.offset) + 1n);
      },
    });

    const caughtUp = await waitFor('lag 0 on both partitions', async () => {
      const s = await samples(registry);
      return s.get('test/0') === 0 && s.get('test/1') === 0 ? s : undefined;
    });
    expect(caughtUp.size).toBe(2);
    expect(lag.lag(topic, 0)).toBe(0n);
    expect(await registry.metrics()).toMatch(
      new RegExp(`kafka_consumer_lag\\{consumer="test",topic="${topic}",partition="0"\\} 0`),
    );

    consumer.pause([{ topic }]);
    await append(0, 5);
    const behind = await waitFor('lag 5 on partition 0 while paused', async () => {
      const s = await samples(registry);
      return s.get('test/0') === 5 ? s : undefined;
    });
    expect(behind.get('test/1')).toBe(0);

    consumer.resume([{ topic }]);
    await waitFor('lag 0 after resuming', async () =>
      (await samples(registry)).get('test/0') === 0 ? true : undefined,
    );

    await lag.stop();
    expect([...(await samples(registry)).keys()]).toEqual([]);
  });

  it('follows a group with no consumer here from its committed offsets (earliest when none)', async () => {
    const registry = new Registry();
    const groupId = uniqueId('t-lag-backlog-');
    const admin = kafka.admin();
    await admin.connect();
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '4' }] });
    const high = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const highOf = (p: number) => Number(high.find((o) => o.partition === p)?.high);

    const backlog = trackConsumerLag({
      kafka,
      registry,
      name: 'replay',
      groupId,
      topics: [topic],
      refreshMs: 200,
      logger,
    });
    expect((await samples(registry)).size).toBe(0); // nothing is read before start()
    backlog.start();
    const s = await waitFor('the backlog of both partitions', async () => {
      const x = await samples(registry);
      return x.size === 2 ? x : undefined;
    });
    expect(s.get('replay/0')).toBe(highOf(0) - 4);
    expect(s.get('replay/1')).toBe(highOf(1));
    await backlog.stop();
  });
});
