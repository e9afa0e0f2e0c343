/**
 * The topic follower against the real broker: it hands out every record from its start (given
 * marks, or the beginning) exactly once and in offset order per partition, across group rejoins.
 * The rejoins are provoked by a second member joining the follower's own group (a rebalance that
 * takes partitions away from the follower and, once the member leaves, gives them back): a group
 * that commits nothing would restart those partitions from the subscription's default.
 */
import type { Consumer, Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../tests/support/config.ts';
import { until } from '../../tests/support/poll.ts';
import { uniqueId } from '../../tests/support/processes.ts';
import { createLogger } from '../logger.ts';
import { createKafka, partitionOffsets } from './kafka.ts';
import { createTopicFollower, type TopicFollower } from './topic-follower.ts';

const logger = createLogger('follower-test', 'silent');
const config = loadConfig(process.env, {});
const PARTITIONS = 3;
let kafka: Kafka;
const topics: string[] = [];
const followers: TopicFollower[] = [];
const consumers: Consumer[] = [];

async function newTopic(): Promise<string> {
  const topic = uniqueId('t-follower-');
  topics.push(topic);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  await admin.disconnect();
  return topic;
}

/** Appends `n` records to every partition of `topic`. */
async function append(topic: string, n: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let partition = 0; partition < PARTITIONS; partition++)
    for (let i = 0; i < n; i++) messages.push({ partition, value: `r${i}` });
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

/** A follower of `topic` recording what it hands out, and each join's assignment. */
function follow(topic: string, from: ReadonlyMap<number, bigint> | 'beginning') {
  const got = new Map<number, bigint[]>();
  const joins: number[][] = [];
  const f = createTopicFollower({
    kafka,
    topic,
    groupPrefix: 'follower-test',
    from,
    maxWaitTimeInMs: 50,
    logger,
    onRecords: ({ partition, records }) => {
      const list = got.get(partition) ?? [];
      got.set(partition, list);
      for (const m of records) list.push(BigInt(m.offset));
    },
    onJoin: (partitions) => joins.push([...partitions].sort()),
  });
  followers.push(f);
  return { f, got, joins };
}

/** Offsets from..to-1. */
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => BigInt(from + i));

/**
 * Makes the follower rejoin twice: a second member joins its group (the follower keeps part of the
 * partitions), `during` runs, then the member leaves (the follower gets every partition back).
 */
async function rebalanceAround(
  f: TopicFollower,
  topic: string,
  joins: number[][],
  during: () => Promise<void>,
) {
  const before = joins.length;
  const intruder = kafka.consumer({ groupId: f.groupId, maxWaitTimeInMs: 50 });
  consumers.push(intruder);
  await intruder.connect();
  await intruder.subscribe({ topic, fromBeginning: false });
  await intruder.run({ autoCommit: false, eachBatch: async () => {} });
  await until(
    () => joins.length > before && (joins.at(-1)?.length ?? 0) < PARTITIONS,
    60_000,
    'the follower to rejoin with part of the partitions',
  );
  await during();
  await intruder.disconnect();
  await until(
    () => (joins.at(-1)?.length ?? 0) === PARTITIONS && joins.length > before + 1,
    60_000,
    'the follower to rejoin with every partition',
  );
}

beforeAll(() => {
  kafka = createKafka(config, 'follower-test', logger);
});

afterAll(async () => {
  for (const f of followers) await f.stop().catch(() => {});
  for (const c of consumers) await c.disconnect().catch(() => {});
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
});

describe('topic follower', () => {
  it('from marks: hands out each record after the marks once, in order, across rejoins', async () => {
    const topic = await newTopic();
    await append(topic, 5);
    const marks = new Map([...(await partitionOffsets(kafka, topic))].map(([p, o]) => [p, o.high]));
    expect([...marks.values()]).toEqual([5n, 5n, 5n]);
    await append(topic, 3); // appended during a (pretend) backward scan: must not be missed
    const { f, got, joins } = follow(topic, marks);
    await f.start();
    await until(() => f.ready, 30_000, 'the follower to be ready');
    await rebalanceAround(f, topic, joins, () => append(topic, 3));
    await append(topic, 2);
    await until(
      () => [...f.positions().values()].every((n) => n === 13n) && f.positions().size === PARTITIONS,
      30_000,
      'every record handed out',
    );
    for (let p = 0; p < PARTITIONS; p++) expect(got.get(p)).toEqual(range(5, 13));
  }, 180_000);

  it('from the beginning: hands out each record once, in order, across rejoins', async () => {
    const topic = await newTopic();
    await append(topic, 4);
    const { f, got, joins } = follow(topic, 'beginning');
    await f.start();
    await until(() => f.positions().size === PARTITIONS, 30_000, 'the first records');
    await rebalanceAround(f, topic, joins, () => append(topic, 2));
    await append(topic, 1);
    await until(
      () => [...f.positions().values()].every((n) => n === 7n) && f.positions().size === PARTITIONS,
      30_000,
      'every record handed out',
    );
    // A moment more: a re-read from the beginning would show up as duplicates now.
    await new Promise((r) => setTimeout(r, 1000));
    for (let p = 0; p < PARTITIONS; p++) expect(got.get(p)).toEqual(range(0, 7));
    await f.stop();
    expect(f.ready).toBe(false);
  }, 180_000);
});
