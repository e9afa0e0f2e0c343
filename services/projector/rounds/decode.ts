/**
 * Turns raw records of the `rounds` topic into projectable events, and the ones that cannot be
 * decoded into dead-letter records (original key and value, reason and origin in headers) so
 * one bad record never stops the projection. Pure: no I/O.
 */
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { type Decoded, decodeEach, type Undecodable } from '../../../lib/log/projection-spec.ts';
import { decodeRound } from '../../../rules/rounds/round.ts';
import type { OffsetEvent } from './store.ts';

/** Header names on a dead-lettered record. */
export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  topic: 'dlq-topic',
  partition: 'dlq-partition',
  offset: 'dlq-offset',
  projection: 'dlq-projection',
} as const;

/**
 * Decodes `messages` (one partition, log order).
 * `appendedAt` of each event is the record's Kafka timestamp (Unix ms): the broker's append time
 * on a LogAppendTime topic, the producer's create time otherwise.
 */
export function decodeMessages(messages: readonly KafkaMessage[]): Decoded<OffsetEvent> {
  return decodeEach(messages, (message) => ({
    offset: BigInt(message.offset),
    event: { round: decodeRound(message.value), appendedAt: Number(message.timestamp) },
  }));
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
