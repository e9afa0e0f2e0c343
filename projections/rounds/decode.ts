/**
 * Turns raw records of the `rounds` topic into projectable events, and the ones that cannot be
 * decoded into dead-letter records (original key and value, reason and origin in headers) so
 * one bad record never stops the projection. Pure: no I/O.
 */
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { decodeRound } from '../../lib/rounds.ts';
import type { OffsetEvent } from './store.ts';

/** Header names on a dead-lettered record. */
export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  topic: 'dlq-topic',
  partition: 'dlq-partition',
  offset: 'dlq-offset',
  projection: 'dlq-projection',
} as const;

/** A record that did not decode, with why. */
export interface Undecodable {
  readonly message: KafkaMessage;
  readonly reason: string;
}

/**
 * Decodes `messages` (one partition, log order).
 * `appendedAt` of each event is the record's Kafka timestamp (Unix ms): the broker's append time
 * on a LogAppendTime topic, the producer's create time otherwise.
 */
export function decodeMessages(messages: readonly KafkaMessage[]): {
  events: OffsetEvent[];
  undecodable: Undecodable[];
} {
  const events: OffsetEvent[] = [];
  const undecodable: Undecodable[] = [];
  for (const message of messages) {
    try {
      const round = decodeRound(message.value);
      events.push({
        offset: BigInt(message.offset),
        event: { round, appendedAt: Number(message.timestamp) },
      });
    } catch (err) {
      undecodable.push({ message, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return { events, undecodable };
}

/** The dead-letter record of `u`, read from `topic`/`partition` by `projection`: same key and value, original headers kept. */
export function deadLetterMessage(
  u: Undecodable,
  origin: { topic: string; partition: number; projection: string },
): Message {
  const headers: IHeaders = {
    ...(u.message.headers ?? {}),
    [DLQ_HEADERS.reason]: u.reason,
    [DLQ_HEADERS.topic]: origin.topic,
    [DLQ_HEADERS.partition]: String(origin.partition),
    [DLQ_HEADERS.offset]: u.message.offset,
    [DLQ_HEADERS.projection]: origin.projection,
  };
  return { key: u.message.key, value: u.message.value, headers };
}
