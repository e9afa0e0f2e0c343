/**
 * What a checkpointed consumer (checkpointed-consumer.ts) does with its records, apart from how
 * they arrive: its checkpoint name, its topics, how one record decodes and how decoded events are
 * written (rows and checkpoint in ONE statement, lib/db/checkpoints.ts). The live consumer and the
 * rebuild (lib/rebuild) both write through a spec, so a rebuilt table comes from
 * exactly the code that keeps the live one.
 *
 * Two kinds of failure are told apart:
 * - a record that can never be written: it does not decode, Postgres refuses its data
 *   (`isPermanentDataError`, SQLSTATE classes 22/23/54), or the write refuses it as a round the
 *   admission rule refuses (RoundRefusedError, rules/rounds/admission.ts). `writeIsolating` finds it by writing
 *   the chunk's records one at a time, hands it to `onPoison` (the dead-letter topic) and writes
 *   the others;
 * - anything else (connection lost, timeout, serialization failure): the caller retries.
 */
import type { KafkaMessage } from 'kafkajs';
import { RoundRefusedError } from '../../rules/errors.ts';
import type { CheckpointKey } from '../db/checkpoints.ts';
import { isPermanentDataError, type Sql } from '../db/pool.ts';
import type { TopicKey } from './topics.ts';

/** A record that cannot be written, with why. */
export interface Poison {
  readonly message: KafkaMessage;
  readonly reason: string;
}

/** A decoded record: the event and the record it came from. */
export interface Item<E> {
  readonly message: KafkaMessage;
  readonly event: E;
}

/** What one write stored. */
export interface Written {
  /** The stored checkpoint after the commit (next offset to read); never lower than before. */
  readonly checkpoint: bigint;
  /**
   * Work to do once the write committed (e.g. append the events it decided to the log); retried
   * like a write until it succeeds or the consumer stops. Must be safe to repeat.
   */
  readonly afterCommit?: () => Promise<void>;
}

export interface ConsumerSpec<E> {
  /** `projection` of its rows in projection_checkpoints, and the metrics' `projection` label. */
  readonly name: string;
  /** Topics consumed; a batch holds records of one partition of one of them. */
  readonly topics: readonly TopicKey[];
  /** Most records per atomic write; Infinity = one write per Kafka batch. */
  readonly chunkSize: number;
  /**
   * Partitions written at once (default 1: one batch at a time). More overlap one partition's
   * write with the fetch and decoding of others; only for a spec whose partitions never depend on
   * each other's order (each partition keeps its own checkpoint and writes in its own log order).
   */
  readonly partitionsAtOnce?: number;
  /** Decodes one record of `topic`. @throws for a record that can never be decoded. */
  decode(message: KafkaMessage, topic: TopicKey): E;
  /**
   * Writes `events` (log order, one partition of `key.topic`) and sets the checkpoint of `key` to
   * `next`, in one statement or transaction. An empty `events` moves only the checkpoint.
   * @throws the postgres.js error; nothing of the write is then stored.
   */
  write(
    sql: Sql,
    key: CheckpointKey & { readonly topicKey: TopicKey },
    events: readonly E[],
    next: bigint,
  ): Promise<Written>;
  /**
   * Where a partition without a checkpoint starts, given its first retained offset `low` and its
   * high-water mark `high` (default: `low`).
   */
  initialOffset?(topic: TopicKey, low: bigint, high: bigint): bigint;
  /**
   * Told after every group join which partitions of `topic` this member now has (possibly none),
   * once their checkpoints are read and their positions set, before any batch of the new
   * assignment is written; run through the consumer's database gate, so a failure is retried
   * (settlement claims its wallet partitions here and settles what their previous owner left).
   * @throws anything; the call is then retried with the write backoff.
   */
  assigned?(sql: Sql, topic: TopicKey, partitions: readonly number[]): Promise<void>;
}

/** Records of one range split into what decoded and what did not. */
export interface Decoded<E> {
  readonly items: Item<E>[];
  readonly poison: Poison[];
}

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Decodes each message of `topic` with `spec`; a throw makes the message poison with its reason. */
export function decodeAll<E>(
  spec: Pick<ConsumerSpec<E>, 'decode'>,
  topic: TopicKey,
  messages: readonly KafkaMessage[],
): Decoded<E> {
  const items: Item<E>[] = [];
  const poison: Poison[] = [];
  for (const message of messages) {
    try {
      items.push({ message, event: spec.decode(message, topic) });
    } catch (err) {
      poison.push({ message, reason: reasonOf(err) });
    }
  }
  return { items, poison };
}

/** A write's refusal of its data, for good: Postgres's (SQLSTATE classes 22/23/54) or a round the admission rule refuses. */
const refused = (err: unknown): boolean => isPermanentDataError(err) || err instanceof RoundRefusedError;

/**
 * Writes `items` with the checkpoint `next`. When Postgres refuses the data of the chunk, writes
 * its records one at a time instead (each moving the checkpoint past itself), hands each refused
 * one to `onPoison` before the write that moves the checkpoint past it, and writes the rest.
 * @returns what the last write stored, and the afterCommit work of every write, in order.
 * @throws any other error of a write (transient: the caller retries the whole call; what was
 *   stored before it stays stored, and a retry skips nothing because checkpoints never move back).
 */
export async function writeIsolating<E>(
  spec: Pick<ConsumerSpec<E>, 'write'>,
  sql: Sql,
  key: CheckpointKey & { readonly topicKey: TopicKey },
  items: readonly Item<E>[],
  next: bigint,
  onPoison: (poison: Poison) => Promise<void>,
): Promise<{ checkpoint: bigint; afterCommit: (() => Promise<void>)[] }> {
  try {
    const w = await spec.write(
      sql,
      key,
      items.map((i) => i.event),
      next,
    );
    return { checkpoint: w.checkpoint, afterCommit: w.afterCommit ? [w.afterCommit] : [] };
  } catch (err) {
    if (!refused(err)) throw err;
  }
  const afterCommit: (() => Promise<void>)[] = [];
  let checkpoint = 0n;
  for (const [i, item] of items.entries()) {
    const to = i === items.length - 1 ? next : BigInt(item.message.offset) + 1n;
    let w: Written;
    try {
      w = await spec.write(sql, key, [item.event], to);
    } catch (err) {
      if (!refused(err)) throw err;
      await onPoison({
        message: item.message,
        reason: err instanceof RoundRefusedError ? err.message : `refused by postgres: ${reasonOf(err)}`,
      });
      w = await spec.write(sql, key, [], to);
    }
    checkpoint = w.checkpoint;
    if (w.afterCommit) afterCommit.push(w.afterCommit);
  }
  return { checkpoint, afterCommit };
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
