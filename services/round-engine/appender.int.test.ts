/**
 * The appender against the real broker: a round is appended once with its header, and after a
 * failed send it reads the log and does not send a round again that already landed. The failure
 * is real: the appender's client points at a closed port, while the log check reads the real
 * broker (as after a broker restart where the first send landed but its answer was lost).
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeRound, encodeRound } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildChain } from '../../rules/fairness/chain.ts';
import { type ChainSource, decide, evolve, initialState } from '../../rules/rounds/decider.ts';
import type { RoundEvent, RoundFinished } from '../../rules/rounds/round.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { createAppender } from './appender.ts';
import { eventLanded } from './log-tail.ts';
import { createMetrics } from './metrics.ts';

const config = loadConfig(process.env, { TOPIC_NAMESPACE: `t-${randomBytes(4).toString('hex')}-` });
const logger = createLogger('test', 'silent');
const kafka = createKafka(config, 'appender-int', logger);
const topic = topicName(config, 'rounds');
const chains: ChainSource = (slug, epoch) => buildChain(Buffer.alloc(32, 3), slug, epoch, 20);
const landed = (e: RoundEvent) => eventLanded(kafka, topic, e);

async function readAll() {
  const offsets = await partitionOffsets(kafka, topic);
  const out: { round: RoundFinished; eventType: string }[] = [];
  await readRange(kafka, topic, new Map([...offsets].map(([p, o]) => [p, o.low])), (r) => {
    out.push({ round: decodeRound(r.message.value), eventType: String(r.message.headers?.['event-type']) });
  });
  return out;
}

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds']);
  await admin.disconnect();
});

afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect();
});

describe('appender', () => {
  const first = decide(initialState('crash'), chains, Date.now());
  const second = decide(evolve(initialState('crash'), first), chains, Date.now());

  it('appends a round once, keyed by game slug, with the event-type header', async () => {
    const metrics = createMetrics();
    const a = createAppender({ kafka, topic, slug: 'crash', logger, metrics, landed, clock: Date.now });
    await a.connect();
    expect(a.connected()).toBe(true);
    await a.append(first, new AbortController().signal);
    await a.close();
    expect(a.connected()).toBe(false);
    expect(await readAll()).toEqual([{ round: first, eventType: 'RoundFinished' }]);
    expect((await metrics.appended.get()).values[0]?.value).toBe(1);
  });

  it('after a failed send, finds the round already in the log and does not send it again', async () => {
    // The round lands (another connection), but the appender's own send fails for real.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'crash', value: encodeRound(second) }] });
    await producer.disconnect();
    const unreachable = new Kafka({
      clientId: 'unreachable',
      brokers: ['127.0.0.1:1'],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 200,
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    });
    const metrics = createMetrics();
    const a = createAppender({
      kafka: unreachable,
      topic,
      slug: 'crash',
      logger,
      metrics,
      landed,
      clock: Date.now,
    });
    await a.append(second, AbortSignal.timeout(30_000));
    await a.close();
    expect((await metrics.sendRetries.get()).values[0]?.value).toBeGreaterThanOrEqual(1);
    expect((await readAll()).map((r) => r.round.round_id)).toEqual([first.round_id, second.round_id]);
  });

  it('gives up only when stopped: an abort rejects a send that cannot succeed', async () => {
    const unreachable = new Kafka({
      clientId: 'unreachable',
      brokers: ['127.0.0.1:1'],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 200,
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    });
    const third = decide(evolve(evolve(initialState('crash'), first), second), chains, Date.now());
    const a = createAppender({
      kafka: unreachable,
      topic,
      slug: 'crash',
      logger,
      metrics: createMetrics(),
      landed: async () => false,
      clock: Date.now,
    });
    await expect(a.append(third, AbortSignal.timeout(3000))).rejects.toThrow();
    await a.close();
    expect((await readAll()).map((r) => r.round.round_id)).not.toContain(third.round_id);
  });
});
