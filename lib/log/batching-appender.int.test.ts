/** The batching appender on the real broker: every record once, in order per key, fewer requests under load. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { AppendDeadlineError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { createBatchingAppender } from './batching-appender.ts';
import { createKafka, readRange } from './kafka.ts';

const config = loadConfig(process.env, { TOPIC_NAMESPACE: `t-batch-${randomBytes(4).toString('hex')}-` });
const kafka = createKafka(config, 'batching-test', createLogger('t', 'silent'));
const topic = `${config.kafka.topicNamespace}appends`;
/** As the project's topics: the broker stamps each record (LogAppendTime). */
const stamped = `${config.kafka.topicNamespace}stamped`;
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
let sends = 0;

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic, numPartitions: 1 },
      {
        topic: stamped,
        numPartitions: 1,
        configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
      },
    ],
  });
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
  await admin.deleteTopics({ topics: [topic, stamped] }).catch(() => {});
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

it('refuses, without sending, a record whose deadline passed while it waited behind a held append; tells each sent one its broker append time', async () => {
  const appender = createBatchingAppender(producer);
  const send = producer.send;
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  producer.send = async (r) => {
    await held;
    return send(r);
  };
  try {
    const before = Date.now();
    const first = appender.append(stamped, 'd0', Buffer.from('held'));
    const late = appender.append(stamped, 'd0', Buffer.from('late'), { deadline: Date.now() + 100 });
    const inTime = appender.append(stamped, 'd0', Buffer.from('in time'), { deadline: Date.now() + 60_000 });
    await new Promise((r) => setTimeout(r, 200));
    release();
    const a = await first;
    await expect(late).rejects.toBeInstanceOf(AppendDeadlineError);
    const c = await inTime;
    const stamps = new Map<string, number>();
    await readRange(kafka, stamped, new Map([[0, 0n]]), (r) => {
      stamps.set(String(r.message.value), Number(r.message.timestamp));
    });
    expect(stamps.has('late')).toBe(false);
    expect(a.appendedAt).toBe(stamps.get('held'));
    expect(c.appendedAt).toBe(stamps.get('in time'));
    expect(a.appendedAt).toBeGreaterThanOrEqual(before + 200 - 5);
  } finally {
    release();
    producer.send = send;
  }
});
