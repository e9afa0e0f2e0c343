/**
 * Turns raw records of the `rounds` topic into projectable events at their offsets: finished rounds
 * (the read models are history and the game list); the lifecycle events and cash-out decisions of
 * the same topic decode to null and only move the checkpoint. A record that does not decode throws;
 * the checkpointed consumer dead-letters it (lib/log/dead-letter.ts) so one bad record never stops
 * the projection. Pure: no I/O.
 */
import type { KafkaMessage } from 'kafkajs';
import { RoundRefusedError } from '../../../rules/errors.ts';
import { admitByTime } from '../../../rules/rounds/admission.ts';
import { decodeAll, type Poison } from '../../log/consumer-spec.ts';
import { decodeRoundEvent } from '../../log/rounds-codec.ts';
import type { OffsetEvent } from './store.ts';

/**
 * Decodes one record; null for an event of the topic that is not a finished round. `appendedAt` is
 * the record's Kafka timestamp (Unix ms): the broker's append time on a LogAppendTime topic, the
 * producer's create time otherwise.
 * A round the time rule refuses (rules/rounds/admission.ts: `finished_at` more than 5 s after the
 * append time, or more than 10 years before it) throws too, so it is dead-lettered with that reason
 * instead of entering the history where it would sort above every later round. A second record of
 * a round id already stored is not written (the first one stays: `on conflict do nothing`).
 * @throws DecodeError for a record that is not an event of the rounds topic.
 * @throws RoundRefusedError for a round from the future or the past.
 */
export function decodeRecord(message: KafkaMessage): OffsetEvent | null {
  const event = decodeRoundEvent(message.value);
  if (event.type !== 'RoundFinished') return null;
  const appendedAt = Number(message.timestamp);
  const admission = admitByTime(event, appendedAt);
  if (!admission.admitted) throw new RoundRefusedError(admission.reason, admission.detail);
  return { offset: BigInt(message.offset), event: { round: event, appendedAt } };
}

/** Decodes `messages` (one partition, log order) into events and the records that did not decode. */
export function decodeMessages(messages: readonly KafkaMessage[]): {
  events: OffsetEvent[];
  undecodable: Poison[];
} {
  const { items, poison } = decodeAll({ decode: decodeRecord }, 'rounds', messages);
  return { events: items.flatMap((i) => (i.event ? [i.event] : [])), undecodable: poison };
}
