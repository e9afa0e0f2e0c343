/**
 * What the ops console shows of the log: the platform's topics (lib/log/topics.ts TOPICS under
 * TOPIC_NAMESPACE) with each partition's leader, replicas, in-sync replicas and its low and high
 * watermarks, and the consumer groups that committed offsets on those topics with their lag per
 * partition. Read through the kafkajs admin client at each request (no cache: the console polls).
 *
 * Lag of a group's partition is what kafka-consumer-groups.sh prints as LAG and what
 * lib/log/consumer-lag.ts exports as `kafka_consumer_committed_lag`: high-water mark − committed
 * offset. A partition of a topic the group reads but never committed on has a null committed offset
 * and counts everything retained (high − low) as lag, since the group would start from the low end.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { SharedConfig } from '../../../lib/config/shared.ts';
import { UnavailableError } from '../../../lib/errors.ts';
import { TOPICS, type TopicKey, topicName } from '../../../lib/log/topics.ts';

/** One partition of a topic; offsets are decimal strings' numbers (Kafka int64 fits 2^53 here). */
export interface PartitionView {
  readonly partition: number;
  /** Broker id of the leader (-1 when the partition has none). */
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** Next offset to be written. */
  readonly high_water_mark: number;
  /** First retained offset. */
  readonly low_water_mark: number;
}

export interface TopicView {
  readonly name: string;
  readonly partitions: readonly PartitionView[];
}

export interface GroupPartitionLag {
  readonly partition: number;
  /** Offset the group committed (the next it will read), or null when it committed none. */
  readonly committed_offset: number | null;
  readonly high_water_mark: number;
  /** Records behind: high − committed (high − low without a commit); never negative. */
  readonly lag: number;
}

export interface GroupView {
  readonly group_id: string;
  /** The broker's group state: Stable, Empty, PreparingRebalance, CompletingRebalance, Dead. */
  readonly state: string;
  /** Members currently in the group. */
  readonly members: number;
  /** Sum of `lag` over every partition listed. */
  readonly total_lag: number;
  readonly topics: readonly { readonly topic: string; readonly partitions: readonly GroupPartitionLag[] }[];
}

/** The platform's topic names in `config`'s namespace, by name. */
export function platformTopics(config: Pick<SharedConfig, 'kafka'>): ReadonlyMap<string, TopicKey> {
  return new Map((Object.keys(TOPICS) as TopicKey[]).map((k) => [topicName(config, k), k]));
}

/**
 * Runs `f` with a connected admin client of `kafka`.
 * @throws UnavailableError when the brokers cannot be reached (the API answers 503).
 */
export async function withAdmin<T>(kafka: Kafka, f: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
  } catch (err) {
    throw new UnavailableError(`cannot reach the Kafka brokers: ${(err as Error).message}`, err);
  }
  try {
    return await f(admin);
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** Low and high watermarks per partition of `topic`. */
async function watermarks(admin: Admin, topic: string): Promise<Map<number, { low: number; high: number }>> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]));
}

/**
 * The platform's topics that exist on the broker, by name, with their partitions (sorted).
 * `only` limits them to one name (absent from the answer when it does not exist).
 * @throws UnavailableError when the brokers cannot be reached.
 */
export async function readTopics(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  only?: string,
): Promise<TopicView[]> {
  return withAdmin(kafka, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const names = [...platformTopics(config).keys()]
      .filter((n) => existing.has(n) && (only === undefined || n === only))
      .sort();
    if (names.length === 0) return [];
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    const out: TopicView[] = [];
    for (const t of topics.sort((a, b) => a.name.localeCompare(b.name))) {
      const marks = await watermarks(admin, t.name);
      out.push({
        name: t.name,
        partitions: t.partitions
          .map((p) => ({
            partition: p.partitionId,
            leader: p.leader,
            replicas: [...p.replicas].sort((a, b) => a - b),
            isr: [...p.isr].sort((a, b) => a - b),
            high_water_mark: marks.get(p.partitionId)?.high ?? 0,
            low_water_mark: marks.get(p.partitionId)?.low ?? 0,
          }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    return out;
  });
}

/**
 * Every consumer group that committed an offset on one of the platform's topics, sorted by id, with
 * its lag per partition of those topics (see the module comment).
 * @throws UnavailableError when the brokers cannot be reached.
 */
export async function readConsumerGroups(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
): Promise<GroupView[]> {
  const ours = platformTopics(config);
  return withAdmin(kafka, async (admin) => {
    const { groups } = await admin.listGroups();
    const committed = new Map<
      string,
      { topic: string; partitions: { partition: number; offset: string }[] }[]
    >();
    // A few requests at a time: a shared broker may hold many groups (tests, other namespaces).
    for (let i = 0; i < groups.length; i += 16) {
      const slice = groups.slice(i, i + 16);
      // Without `topics`, kafkajs asks for every topic the group committed on.
      const all = await Promise.all(slice.map((g) => admin.fetchOffsets({ groupId: g.groupId })));
      slice.forEach((g, j) => {
        const mine = (all[j] ?? []).filter((t) => ours.has(t.topic));
        if (mine.length > 0) committed.set(g.groupId, mine);
      });
    }
    if (committed.size === 0) return [];
    const { groups: described } = await admin.describeGroups([...committed.keys()]);
    const marks = new Map<string, Map<number, { low: number; high: number }>>();
    const marksOf = async (topic: string) => {
      let m = marks.get(topic);
      if (!m) {
        m = await watermarks(admin, topic);
        marks.set(topic, m);
      }
      return m;
    };
    const out: GroupView[] = [];
    for (const [groupId, topics] of [...committed].sort(([a], [b]) => a.localeCompare(b))) {
      const d = described.find((x) => x.groupId === groupId);
      const views = [];
      for (const t of [...topics].sort((a, b) => a.topic.localeCompare(b.topic))) {
        const m = await marksOf(t.topic);
        const partitions = [...m.entries()]
          .sort(([a], [b]) => a - b)
          .map(([partition, { low, high }]) => {
            const c = t.partitions.find((p) => p.partition === partition);
            const offset = c === undefined || Number(c.offset) < 0 ? null : Number(c.offset);
            return {
              partition,
              committed_offset: offset,
              high_water_mark: high,
              lag: Math.max(0, high - (offset ?? low)),
            };
          });
        views.push({ topic: t.topic, partitions });
      }
      out.push({
        group_id: groupId,
        state: d?.state ?? 'Unknown',
        members: d?.members.length ?? 0,
        total_lag: views.reduce((s, v) => s + v.partitions.reduce((n, p) => n + p.lag, 0), 0),
        topics: views,
      });
    }
    return out;
  });
}
