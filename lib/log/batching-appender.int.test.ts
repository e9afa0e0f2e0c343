/** The batching appender on the real broker: every record once, in order per key, fewer requests under load. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { createLogger } from '../logger.ts';
import { createBatchingAppender } from './batching-appender.ts';
import { createKafka, readRange } from './kafka.ts';

const config = loadConfig(process.env, { TOPIC_NAMESPACE: `t-batch-${randomBytes(4).toString('hex')}-` });
const kafka = createKafka(config, 'batching-test', createLogger('t', 'silent'));
const topic = `${config.kafka.topicNamespace}appends`;
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
let sends = 0;

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  await producer.connect();
  const send = producer.send.bind(producer);
  producer.send = (r) => {
    sends++;
    return send(r);
  };
});
afterAll(async () => {
  await producer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

it('appends 300 concurrent records once each, in order per key, in fewer requests than records', async () => {
  const appender = createBatchingAppender(producer);
  await Promise.all(
    Array.from({ length: 300 }, (_, i) => appender.append(topic, `k${i % 3}`, Buffer.from(String(i)))),
  );
  expect(sends).toBeLessThan(300);
  const seen: { key: string; n: number }[] = [];
  await readRange(kafka, topic, new Map([[0, 0n]]), (r) => {
    seen.push({ key: String(r.message.key), n: Number(String(r.message.value)) });
  });
  expect(seen).toHaveLength(300);
  for (const k of ['k0', 'k1', 'k2']) {
    const ns = seen.filter((s) => s.key === k).map((s) => s.n);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
  }
  // Idle: one record, one request.
  const before = sends;
  await appender.append(topic, 'k0', Buffer.from('300'));
  expect(sends).toBe(before + 1);
});
