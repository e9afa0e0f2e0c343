/**
 * Offset commits of the checkpointed consumer on the real broker and Postgres, when the group's
 * coordinator answers "This is not the correct coordinator for this group" (a coordinator that
 * moved, as in a broker failover; one broker cannot move it, so the consumer's commit is made to
 * fail with kafkajs's own protocol error, code 16, for its first attempts). A failed commit is
 * retried until the broker holds the checkpoint, is logged at warn and counted; one that keeps
 * failing shows as committed lag while the processed lag is 0.
 */
import { createRequire } from 'node:module';
import type { Consumer, ConsumerRunConfig, EachBatchPayload, Kafka } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../../tests/support/poll.ts';
import { createTestEnv, type TestEnv } from '../../tests/support/projector.ts';
import { checkpointUpsert, readCheckpoints } from '../db/checkpoints.ts';
import { createLogger } from '../logger.ts';
import { buildCheckpointedConsumer, type CheckpointedConsumer } from './checkpointed-consumer.ts';
import { COMMIT_FAILURES_METRIC, COMMITTED_LAG_METRIC, CONSUMER_LAG_METRIC } from './consumer-lag.ts';
import type { ConsumerSpec } from './consumer-spec.ts';

const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode: (code: number) => Error;
};

let env: TestEnv;
let consumer: CheckpointedConsumer | undefined;
/** Commit attempts still to fail with NOT_COORDINATOR (16). */
let failNext = 0;
let attempts = 0;
const logLines: { level: number; msg: string }[] = [];
const registry = new Registry();
const NAME = 'commit-test';

/** Counts each processed record's offset; the write moves only the checkpoint. */
const spec: ConsumerSpec<string> = {
  name: NAME,
  topics: ['rounds'],
  chunkSize: Number.POSITIVE_INFINITY,
  decode: (m) => m.offset,
  async write(sql, key, _events, next) {
    const [r] = await checkpointUpsert(sql, key, next);
    return { checkpoint: BigInt((r as { offset: string }).offset) };
  },
};

/** `kafka` whose consumers' commits fail while `failNext` > 0; everything else is the real client. */
function failingCommits(kafka: Kafka): Kafka {
  const wrap = (c: Consumer): Consumer => {
    const run = c.run.bind(c);
    c.run = (cfg?: ConsumerRunConfig) =>
      run({
        ...cfg,
        eachBatch: async (p: EachBatchPayload) =>
          cfg?.eachBatch?.({
            ...p,
            commitOffsetsIfNecessary: async (offsets) => {
              attempts++;
              if (failNext > 0) {
                failNext--;
                throw createErrorFromCode(16);
              }
              return p.commitOffsetsIfNecessary(offsets);
            },
          }),
      });
    return c;
  };
  return new Proxy(kafka, {
    get(target, prop) {
      if (prop === 'consumer') return (cfg: Parameters<Kafka['consumer']>[0]) => wrap(target.consumer(cfg));
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = await registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
}

async function committedAtBroker(): Promise<bigint> {
  const admin = env.kafka.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({
      groupId: `${env.config.kafka.topicNamespace}commits`,
      topics: [env.topic],
    });
    return BigInt(t?.partitions.find((p) => p.partition === 0)?.offset ?? '-1');
  } finally {
    await admin.disconnect();
  }
}

async function checkpoint(): Promise<bigint | undefined> {
  return (await readCheckpoints(env.sql, NAME, env.topic)).get(0);
}

async function produce(n: number): Promise<void> {
  await env.producer.send({
    topic: env.topic,
    messages: Array.from({ length: n }, (_, i) => ({ partition: 0, value: `r${i}` })),
  });
}

beforeAll(async () => {
  env = await createTestEnv('commits', { KAFKA_LAG_REFRESH_MS: '200' });
  consumer = buildCheckpointedConsumer(spec, {
    config: env.config,
    kafka: failingCommits(env.kafka),
    sql: env.sql,
    logger: createLogger('commits', 'info', {
      write(line: string) {
        const l = JSON.parse(line) as { level: number; msg: string };
        logLines.push({ level: l.level, msg: l.msg });
      },
    }),
    groupId: `${env.config.kafka.topicNamespace}commits`,
    maxWaitTimeInMs: 50,
    commitOffsets: true,
    lagName: NAME,
    options: { registry },
  });
  await consumer.start();
});
afterAll(async () => {
  await consumer?.stop();
  await env?.close();
});

it('retries a commit the coordinator refused until the broker holds the checkpoint; warns and counts each failure', async () => {
  failNext = 2;
  await produce(5);
  await waitFor(
    'the checkpoint at 5',
    async () => ((await checkpoint()) === 5n ? true : undefined),
    20_000,
    50,
  );
  // The checkpoint is written before the commit: the broker gets it from the third attempt.
  await waitFor(
    'the group offset at the broker at 5',
    async () => ((await committedAtBroker()) === 5n ? true : undefined),
    10_000,
    100,
  );
  expect(attempts).toBe(3);
  expect(await metric(COMMIT_FAILURES_METRIC, { consumer: NAME })).toBe(2);
  const warnings = logLines.filter((l) => l.level === 40 && /offset commit failed/.test(l.msg));
  expect(warnings).toHaveLength(2);
  await waitFor(
    'both lags 0',
    async () =>
      (await metric(CONSUMER_LAG_METRIC, { consumer: NAME })) === 0 &&
      (await metric(COMMITTED_LAG_METRIC, { consumer: NAME })) === 0
        ? true
        : undefined,
    5000,
    100,
  );
});

it('a commit that keeps failing shows as committed lag while the processed lag is 0', async () => {
  failNext = 1_000;
  const before = attempts;
  await produce(3);
  await waitFor(
    'the checkpoint at 8',
    async () => ((await checkpoint()) === 8n ? true : undefined),
    20_000,
    50,
  );
  // One commit: its first attempt and 5 retries, each a warning and a count.
  await waitFor('every attempt made', () => (attempts - before === 6 ? true : undefined), 10_000, 50);
  expect(await metric(COMMIT_FAILURES_METRIC, { consumer: NAME })).toBe(8);
  expect(await committedAtBroker()).toBe(5n);
  await waitFor(
    'committed lag 3, processed lag 0',
    async () =>
      (await metric(COMMITTED_LAG_METRIC, { consumer: NAME })) === 3 &&
      (await metric(CONSUMER_LAG_METRIC, { consumer: NAME })) === 0
        ? true
        : undefined,
    5000,
    100,
  );
  failNext = 0;
});
