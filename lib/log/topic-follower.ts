/**
 * The one way this project follows a topic without a position of its own at the broker: an edge's
 * rounds source (lib/stream/source.ts), the lifecycle view (round-phases.ts) and the key tables
 * (lib/auth/key-table.ts) read every partition of one topic, each process with a consumer group
 * of its own (`<prefix>-<uuid>`) that commits nothing.
 *
 * Start: from given marks (the high-water marks captured before a backward scan of the tail, so
 * nothing appended during the scan is missed) or from the first retained offset of every partition
 * (`'beginning'`).
 *
 * Rejoin: a consumer group can rejoin at any time (a broker outage restarts the kafkajs consumer,
 * a coordinator moves, a member comes or goes). A group that commits nothing would then start each
 * partition again from the subscription's default (the beginning: every record read twice; the end:
 * the records appended meanwhile skipped). After EVERY group join the follower seeks each assigned
 * partition to the next offset it has not handed out yet (the start mark until then); a partition
 * it has no position for starts at the start mode's default. Records below that offset that a
 * fetch still brings are dropped, so each record is handed out exactly once and in offset order
 * per partition (docs/decisions/log-and-topics/0012-one-topic-follower.md).
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import { type ConsumerLag, trackConsumerLag } from './consumer-lag.ts';

/** The records of one partition handed out at once, in offset order, none handed out before. */
export interface FollowedRecords {
  readonly partition: number;
  readonly records: readonly KafkaMessage[];
}

export interface TopicFollowerOptions {
  readonly kafka: Kafka;
  /** Full name of the topic followed. */
  readonly topic: string;
  /** The group id is `<groupPrefix>-<uuid>`, new for every follower. */
  readonly groupPrefix: string;
  /**
   * Where each partition starts: the next offset to hand out per partition (e.g. high-water marks
   * captured before a backward scan), or `'beginning'` for the first retained offset. A partition
   * missing from the marks starts at its end.
   */
  readonly from: ReadonlyMap<number, bigint> | 'beginning';
  /** Longest wait of a fetch for new records, ms. */
  readonly maxWaitTimeInMs: number;
  /** Least bytes a fetch waits for (kafkajs' default: 1). */
  readonly minBytes?: number;
  readonly logger: Logger;
  /**
   * Receives the new records of a batch. It must not throw: a throw is logged and the records
   * count as handed out all the same (they are never handed out twice).
   */
  readonly onRecords: (got: FollowedRecords) => void;
  /** Called after each group join with the partitions assigned (tests, logs). */
  readonly onJoin?: (partitions: readonly number[]) => void;
  /** When given, the follower's `kafka_consumer_lag{consumer=name}` goes there (consumer-lag.ts). */
  readonly lag?: { readonly registry: Registry; readonly name: string; readonly refreshMs: number };
}

export interface TopicFollower {
  /** The follower's own consumer group (`<groupPrefix>-<uuid>`). */
  readonly groupId: string;
  /** True once joined and fetching, until a crash or `stop()`. */
  readonly ready: boolean;
  /** The next offset to hand out per partition: every record below it has been handed out. */
  positions(): ReadonlyMap<number, bigint>;
  /**
   * Connects, joins and starts handing out records; resolves once running (not yet joined).
   * @throws when the broker cannot be reached (kafkajs retries first).
   */
  start(): Promise<void>;
  /** Leaves the group, disconnects, stops the lag tracker; idempotent. */
  stop(): Promise<void>;
}

/**
 * Seeks every assigned partition to its next offset after a join (see the module comment) and
 * reports those positions to the lag tracker.
 */
function seekOnJoin(
  c: Consumer,
  topic: string,
  next: ReadonlyMap<number, bigint>,
  partitions: readonly number[],
  lag: ConsumerLag | undefined,
): void {
  for (const partition of partitions) {
    const offset = next.get(partition);
    if (offset === undefined) continue;
    c.seek({ topic, partition, offset: String(offset) });
    lag?.position(topic, partition, offset);
  }
}

/** Builds a follower of `o.topic`; nothing connects until `start()`. */
export function createTopicFollower(o: TopicFollowerOptions): TopicFollower {
  const { topic } = o;
  const log = o.logger.child({ component: 'topic-follower', topic });
  const groupId = `${o.groupPrefix}-${randomUUID()}`;
  /** Next offset to hand out per partition: the start marks, then one past each record handed out. */
  const next = new Map<number, bigint>(o.from === 'beginning' ? [] : o.from);
  let consumer: Consumer | undefined;
  let lag: ConsumerLag | undefined;
  let joined = false;
  let ready = false;
  let stopped = false;

  /** Hands out the records of a batch at or above the partition's next offset, then moves it. */
  function handOut(partition: number, messages: readonly KafkaMessage[]): void {
    const from = next.get(partition);
    const records = from === undefined ? messages : messages.filter((m) => BigInt(m.offset) >= from);
    const last = records.at(-1);
    if (!last) return;
    try {
      o.onRecords({ partition, records });
    } catch (err) {
      log.error({ err, partition, offset: last.offset }, 'topic follower handler threw; records skipped');
    }
    const position = BigInt(last.offset) + 1n;
    next.set(partition, position);
    lag?.position(topic, partition, position);
  }

  function listen(c: Consumer): void {
    // GROUP_JOIN is emitted synchronously inside the join, before the first fetch of the new
    // assignment, so the seeks always apply to it.
    c.on(c.events.GROUP_JOIN, (e) => {
      joined = true;
      const partitions = (e.payload.memberAssignment[topic] ?? []) as number[];
      seekOnJoin(c, topic, next, partitions, lag);
      o.onJoin?.(partitions);
    });
    c.on(c.events.FETCH, () => {
      if (joined && !stopped) ready = true;
    });
    c.on(c.events.CRASH, (e) => {
      ready = false;
      joined = false;
      log.error({ err: e.payload.error?.message, restart: e.payload.restart }, 'consumer crashed');
    });
  }

  return {
    groupId,
    get ready() {
      return ready;
    },
    positions: () => new Map(next),
    async start() {
      const c = o.kafka.consumer({
        groupId,
        maxWaitTimeInMs: o.maxWaitTimeInMs,
        ...(o.minBytes === undefined ? {} : { minBytes: o.minBytes }),
      });
      consumer = c;
      if (o.lag) lag = trackConsumerLag({ kafka: o.kafka, groupId, consumer: c, logger: log, ...o.lag });
      listen(c);
      await c.connect();
      await c.subscribe({ topic, fromBeginning: o.from === 'beginning' });
      await c.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => handOut(batch.partition, batch.messages),
      });
    },
    async stop() {
      stopped = true;
      ready = false;
      await consumer?.disconnect();
      consumer = undefined;
      await lag?.stop();
      lag = undefined;
    },
  };
}
