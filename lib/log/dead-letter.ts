/**
 * Dead-letter records of the checkpointed consumers: a record that can never be written (it does
 * not decode, or Postgres refuses its data) is appended to its topic's dead-letter topic with the
 * same key and value, its original headers, and the reason and origin in `dlq-*` headers, so one
 * bad record never stops a consumer and ops can inspect and replay it (`npm run dead-letters`).
 */
import type { IHeaders, Message } from 'kafkajs';
import type { Poison } from './consumer-spec.ts';

/** Header names on a dead-lettered record. */
export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  topic: 'dlq-topic',
  partition: 'dlq-partition',
  offset: 'dlq-offset',
  /** The consumer (checkpoint name) that could not write it. */
  projection: 'dlq-projection',
} as const;

/** The dead-letter record of `p`, read from `topic`/`partition` by `projection`: same key and value, original headers kept. */
export function deadLetterMessage(
  p: Poison,
  origin: { topic: string; partition: number; projection: string },
): Message {
  const headers: IHeaders = {
    ...(p.message.headers ?? {}),
    [DLQ_HEADERS.reason]: p.reason,
    [DLQ_HEADERS.topic]: origin.topic,
    [DLQ_HEADERS.partition]: String(origin.partition),
    [DLQ_HEADERS.offset]: p.message.offset,
    [DLQ_HEADERS.projection]: origin.projection,
  };
  return { key: p.message.key, value: p.message.value, headers };
}
