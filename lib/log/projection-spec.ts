/**
 * What one projection is, apart from how its records arrive: its checkpoint name, its topic, how
 * records decode and how decoded events are written (rows and checkpoint in ONE statement, see
 * rounds/store.ts). The live projector (live-projector.ts) and the rebuild (rebuild/models.ts)
 * both write through it, so a rebuilt table comes from exactly the code that keeps the live one.
 */
import type { KafkaMessage } from 'kafkajs';
import type { CheckpointKey } from '../../services/projector/rounds/store.ts';
import type { Sql } from '../db/pool.ts';
import type { TopicKey } from './topics.ts';

/** A record that did not decode, with why. */
export interface Undecodable {
  readonly message: KafkaMessage;
  readonly reason: string;
}

/** Records of one range split into what decoded and what did not. */
export interface Decoded<E> {
  readonly events: E[];
  readonly undecodable: Undecodable[];
}

export interface ProjectionSpec<E> {
  /** `projection` of its rows in projection_checkpoints, and the metrics' `projection` label. */
  readonly name: string;
  readonly topic: TopicKey;
  /** Most records per atomic write; Infinity = one write per Kafka batch. */
  readonly chunkSize: number;
  /** Decodes `messages` (one partition, log order); never throws for a bad record. */
  decode(messages: readonly KafkaMessage[]): Decoded<E>;
  /**
   * Writes `events` and sets the checkpoint of `key` to `next`, in one statement.
   * @returns the stored checkpoint after the commit (next offset to read).
   * @throws the postgres.js error; nothing of the statement is then stored.
   */
  write(sql: Sql, key: CheckpointKey, events: readonly E[], next: bigint): Promise<bigint>;
}

/** Decodes each message with `decodeOne`; a throw makes the message undecodable with its reason. */
export function decodeEach<E>(
  messages: readonly KafkaMessage[],
  decodeOne: (m: KafkaMessage) => E,
): Decoded<E> {
  const events: E[] = [];
  const undecodable: Undecodable[] = [];
  for (const message of messages) {
    try {
      events.push(decodeOne(message));
    } catch (err) {
      undecodable.push({ message, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return { events, undecodable };
}

/**
 * The slices of `messages` (log order) of at most `size` records, each with the offset its write
 * moves the checkpoint to: one past its last record, and `end` for the last slice (a batch's end
 * also covers records never delivered, e.g. transaction markers). No messages: one empty slice,
 * so the checkpoint still moves to `end`.
 */
export function* chunksOf(
  messages: readonly KafkaMessage[],
  size: number,
  end: bigint,
): Generator<{ readonly messages: readonly KafkaMessage[]; readonly next: bigint }> {
  if (messages.length === 0) yield { messages, next: end };
  for (let i = 0; i < messages.length; i += size) {
    const chunk = messages.slice(i, i + size);
    const last = chunk.at(-1) as KafkaMessage;
    yield { messages: chunk, next: i + size >= messages.length ? end : BigInt(last.offset) + 1n };
  }
}

/** The records at or after `offset` (messages are in log order, so a prefix is dropped). */
export function fromOffset(messages: readonly KafkaMessage[], offset: bigint): readonly KafkaMessage[] {
  const first = messages.findIndex((m) => BigInt(m.offset) >= offset);
  return first === 0 ? messages : first < 0 ? [] : messages.slice(first);
}
