/**
 * Appends through one producer in batches without waiting to batch: a record asked for while an
 * append is on its way goes in the next one, so under load many records share one produce request
 * (one broker round trip) and when idle each goes at once. Records keep their order per topic,
 * hence per key. Each caller learns whether its own record was appended (acks: all in-sync
 * replicas).
 */
import type { Producer } from 'kafkajs';

export interface BatchingAppender {
  /** Appends `value` under `key` to `topic`. @throws the kafkajs error of the batch it went in. */
  append(topic: string, key: string, value: Buffer): Promise<void>;
}

interface Waiting {
  readonly key: string;
  readonly value: Buffer;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** An appender over `producer`; at most `maxBatch` records per produce request. */
export function createBatchingAppender(producer: Producer, maxBatch = 500): BatchingAppender {
  const queues = new Map<string, Waiting[]>();
  const busy = new Set<string>();

  const drain = async (topic: string): Promise<void> => {
    busy.add(topic);
    try {
      for (;;) {
        const queue = queues.get(topic) ?? [];
        if (queue.length === 0) break;
        const batch = queue.splice(0, maxBatch);
        try {
          await producer.send({
            topic,
            acks: -1,
            messages: batch.map((w) => ({ key: w.key, value: w.value })),
          });
          for (const w of batch) w.resolve();
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      busy.delete(topic);
    }
  };

  return {
    append(topic, key, value) {
      return new Promise<void>((resolve, reject) => {
        const queue = queues.get(topic) ?? [];
        queue.push({ key, value, resolve, reject });
        queues.set(topic, queue);
        if (!busy.has(topic)) void drain(topic);
      });
    },
  };
}
