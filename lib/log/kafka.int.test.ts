/**
 * createKafka against the real broker: a coordinator error kafkajs logs while a consumer of the
 * client has not yet joined its group, or a producer not yet connected, is at debug; once they
 * have, the same error is at error level again (the log entry is sent through the client's own
 * kafkajs logger, which is where kafkajs logs a broker's error response).
 */
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { uniqueId } from '../../tests/support/processes.ts';
import { createLogger } from '../logger.ts';
import { createKafka } from './kafka.ts';

const config = loadConfig(process.env, {});
const lines: { level: number; msg: string }[] = [];
const logger = createLogger('kafka-test', 'debug', { write: (s: string) => void lines.push(JSON.parse(s)) });
const topic = uniqueId('t-kafka-start-');
let kafka: Kafka;
let consumer: Consumer | undefined;
let producer: Producer | undefined;

/** The level at which the client logs the error response kafkajs logs while a group forms. */
function levelOfCoordinatorError(): number | undefined {
  const msg = uniqueId('Response GroupCoordinator(key: 10, version: 2) ');
  kafka.logger().error(msg, { error: 'The group coordinator is not available' });
  return lines.find((l) => l.msg === msg)?.level;
}

beforeAll(async () => {
  kafka = createKafka(config, 'kafka-start-test', logger);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
});

afterAll(async () => {
  await consumer?.disconnect().catch(() => {});
  await producer?.disconnect().catch(() => {});
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('coordinator errors of createKafka clients', () => {
  it('are at debug while a consumer joins its group, at error once it has joined', async () => {
    expect(levelOfCoordinatorError()).toBe(50);
    consumer = kafka.consumer({ groupId: uniqueId('t-kafka-start-') });
    expect(levelOfCoordinatorError()).toBe(20);
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joined = true;
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async () => {} });
    await waitFor('the consumer to join its group', () => (joined ? true : undefined), 30_000, 100);
    expect(levelOfCoordinatorError()).toBe(50);
  }, 60_000);

  it('are at debug while an idempotent producer connects, at error once it has', async () => {
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    expect(levelOfCoordinatorError()).toBe(20);
    await producer.connect();
    expect(levelOfCoordinatorError()).toBe(50);
  }, 60_000);

  it('are at error again once a consumer that never joined has crashed for good', async () => {
    // The broker refuses to let it join (INVALID_SESSION_TIMEOUT: below group.min.session.timeout.ms,
    // 6 s by default), and kafkajs is told not to restart it.
    const c = kafka.consumer({
      groupId: uniqueId('t-kafka-crash-'),
      sessionTimeout: 1000,
      heartbeatInterval: 300,
      retry: { retries: 0, restartOnFailure: async () => false },
    });
    let crashed: { restart: boolean; error: string } | undefined;
    c.on(c.events.CRASH, (e) => {
      crashed = { restart: e.payload.restart, error: e.payload.error.message };
    });
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    expect(levelOfCoordinatorError()).toBe(20);
    await c.run({ eachMessage: async () => {} });
    const crash = await waitFor('the consumer to crash', () => crashed, 30_000, 100);
    expect(crash.restart, crash.error).toBe(false);
    expect(levelOfCoordinatorError()).toBe(50);
    await c.disconnect();
  }, 60_000);
});
