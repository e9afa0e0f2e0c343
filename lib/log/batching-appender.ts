/**
 * Appends through one producer in batches without waiting to batch: a record asked for while an
 * append is on its way goes in the next one, so under load many records share one produce request
 * (one broker round trip) and when idle each goes at once. Records keep their order per topic,
 * hence per key. Each caller learns whether its own record was appended (acks: all in-sync
 * replicas) and when the broker appended it.
 *
 * A record may carry a deadline: one still queued when it passes is refused, never sent. A
 * failover holds an append for seconds (acks: all waits until the dead leader is fenced), and the
 * records queued behind it would otherwise reach the log long after the moment they were meant for
 * (a bet after its round's close; docs/decisions/rounds-and-fairness/0004-bets-only-in-the-betting-window.md).
 */
import type { Producer, RecordMetadata } from 'kafkajs';
import { AppendDeadlineError } from '../errors.ts';

export interface AppendOptions {
  /**
   * Unix ms: when the record is still queued at this time it is refused with AppendDeadlineError
   * and not sent. A record already sent is not recalled; its `appendedAt` tells when it landed.
   */
  readonly deadline?: number;
}

export interface Appended {
  /**
   * When the broker appended the record, Unix ms: the partition's LogAppendTime. Records of one
   * request that went to several partitions all get the latest of their partitions' times; a
   * broker that gives no append time (a CreateTime topic) gets the time the acknowledgement came,
   * which is later than the append. Either way never earlier than the record's true append time.
   */
  readonly appendedAt: number;
}

export interface BatchingAppender {
  /**
   * Appends `value` under `key` to `topic`.
   * @throws AppendDeadlineError when `options.deadline` passed while it was queued (not sent);
   *   the kafkajs error of the batch it went in.
   */
  append(topic: string, key: string, value: Buffer, options?: AppendOptions): Promise<Appended>;
}

interface Waiting {
  readonly key: string;
  readonly value: Buffer;
  readonly deadline: number | undefined;
  readonly resolve: (a: Appended) => void;
  readonly reject: (err: unknown) => void;
}

/** The latest broker append time of a produce answer, or undefined when it has none. */
function appendTimeOf(meta: readonly RecordMetadata[]): number | undefined {
  let latest: number | undefined;
  for (const m of meta) {
    const t = Number(m.logAppendTime ?? -1);
    if (Number.isFinite(t) && t >= 0 && (latest === undefined || t > latest)) latest = t;
  }
  return latest;
}

/**
 * An appender over `producer`; at most `maxBatch` records per produce request. `now` (Unix ms) is
 * the clock deadlines are compared with.
 */
export function createBatchingAppender(
  producer: Producer,
  maxBatch = 500,
  now: () => number = Date.now,
): BatchingAppender {
  const queues = new Map<string, Waiting[]>();
  const busy = new Set<string>();

  const drain = async (topic: string): Promise<void> => {
    busy.add(topic);
    try {
      for (;;) {
        const queue = queues.get(topic) ?? [];
        if (queue.length === 0) break;
        const t = now();
        const batch: Waiting[] = [];
        for (const w of queue.splice(0, maxBatch)) {
          if (w.deadline !== undefined && t >= w.deadline) w.reject(new AppendDeadlineError(w.deadline, t));
          else batch.push(w);
        }
        if (batch.length === 0) continue;
        try {
          const meta = await producer.send({
            topic,
            acks: -1,
            messages: batch.map((w) => ({ key: w.key, value: w.value })),
          });
          const appended = { appendedAt: appendTimeOf(meta) ?? now() };
          for (const w of batch) w.resolve(appended);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      busy.delete(topic);
    }
  };

  return {
    append(topic, key, value, options = {}) {
      return new Promise<Appended>((resolve, reject) => {
        const queue = queues.get(topic) ?? [];
        queue.push({ key, value, deadline: options.deadline, resolve, reject });
        queues.set(topic, queue);
        if (!busy.has(topic)) void drain(topic);
      });
    },
  };
}
