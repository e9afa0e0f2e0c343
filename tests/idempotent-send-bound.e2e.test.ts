/**
 * An idempotent producer of createKafka (no retry count limit, so kafkajs does not warn about its
 * EoS guarantees) still gives up on a broker that has gone away: a send to a stopped broker (a
 * private one, tests/support/private-infra.ts) rejects once the client's connection retries are
 * spent, within a bound, instead of retrying for ever.
 */
import type { Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../lib/log/kafka.ts';
import { createLogger } from '../lib/logger.ts';
import { loadConfig } from './support/config.ts';
import { type PrivateKafka, startPrivateKafka } from './support/private-infra.ts';
import { uniqueId } from './support/processes.ts';

/** The client's 8 connection retries wait 200 ms growing to 5 s (about 20 s), plus their timeouts. */
const SEND_BOUND_MS = 60_000;

let broker: PrivateKafka | undefined;
let kafka: Kafka;
let producer: Producer | undefined;
const topic = uniqueId('t-send-bound-');

beforeAll(async () => {
  broker = await startPrivateKafka();
  kafka = createKafka(
    loadConfig({ KAFKA_BROKERS: broker.brokers }),
    'send-bound',
    createLogger('test', 'silent'),
  );
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
}, 120_000);

afterAll(async () => {
  await producer?.disconnect().catch(() => {});
  await broker?.close();
}, 120_000);

describe('an idempotent producer of createKafka', () => {
  it('rejects a send within a bound once its broker has stopped', async () => {
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'before' }] });
    await (broker as PrivateKafka).stop();
    const t0 = performance.now();
    const outcome = await producer.send({ topic, messages: [{ value: 'after' }] }).then(
      () => 'delivered',
      (err: Error) => err.name,
    );
    const ms = Math.round(performance.now() - t0);
    console.log(`send to the stopped broker: ${outcome} after ${ms} ms`);
    expect(outcome).not.toBe('delivered');
    expect(ms).toBeLessThan(SEND_BOUND_MS);
  }, 180_000);
});
