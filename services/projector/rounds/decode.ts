/**
 * Turns raw records of the `rounds` topic into projectable events at their offsets. A record that
 * does not decode throws; the checkpointed consumer dead-letters it (lib/log/dead-letter.ts) so one
 * bad record never stops the projection. Pure: no I/O.
 */
import type { KafkaMessage } from 'kafkajs';
import { decodeAll, type Poison } from '../../../lib/log/consumer-spec.ts';
import { decodeRound } from '../../../lib/log/rounds-codec.ts';
import type { OffsetEvent } from './store.ts';

/**
 * Decodes one record. `appendedAt` is the record's Kafka timestamp (Unix ms): the broker's append
 * time on a LogAppendTime topic, the producer's create time otherwise.
 * @throws DecodeError for a record that is not a RoundFinished.
 */
export function decodeRecord(message: KafkaMessage): OffsetEvent {
  return {
    offset: BigInt(message.offset),
    event: { round: decodeRound(message.value), appendedAt: Number(message.timestamp) },
  };
}

/** Decodes `messages` (one partition, log order) into events and the records that did not decode. */
export function decodeMessages(messages: readonly KafkaMessage[]): {
  events: OffsetEvent[];
  undecodable: Poison[];
} {
  const { items, poison } = decodeAll({ decode: decodeRecord }, 'rounds', messages);
  return { events: items.map((i) => i.event), undecodable: poison };
}
