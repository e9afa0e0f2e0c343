/**
 * Key events on the compacted `auth-keys` topic (record key = key id; Avro, Confluent wire format,
 * schema ids 2..4 in schemas/registry.json, subject = record full name). A KeyDeleted is followed by
 * a tombstone (null value) for the same key so compaction removes the key for good.
 */
import type { Producer } from 'kafkajs';
import type { KeyCreated, KeyDeleted, KeyRevoked } from '../../schemas/generated/avro.ts';
import type { SharedConfig } from '../config/shared.ts';
import { DecodeError } from '../errors.ts';
import { decode, encode } from '../log/codec.ts';
import { topicName } from '../log/topics.ts';

export type { KeyCreated, KeyDeleted, KeyRevoked };

/** One event of the topic; `tombstone` stands for a record with a null value. */
export type KeyEvent =
  | { readonly type: 'KeyCreated'; readonly value: KeyCreated }
  | { readonly type: 'KeyRevoked'; readonly value: KeyRevoked }
  | { readonly type: 'KeyDeleted'; readonly value: KeyDeleted }
  | { readonly type: 'tombstone'; readonly keyId: string };

const SUBJECT = {
  KeyCreated: 'casino.auth.KeyCreated',
  KeyRevoked: 'casino.auth.KeyRevoked',
  KeyDeleted: 'casino.auth.KeyDeleted',
} as const;
const TYPE_OF_SUBJECT = new Map<string, string>(Object.entries(SUBJECT).map(([t, s]) => [s, t]));

/** Where an appended record landed; the key table's `waitFor` takes it. */
export interface LogPosition {
  readonly partition: number;
  readonly offset: bigint;
}

/**
 * Decodes one record of `auth-keys`.
 * @throws DecodeError for a non-key subject or an undecodable value.
 */
export function decodeKeyEvent(key: Buffer | null, value: Buffer | null): KeyEvent {
  if (value === null) {
    if (!key) throw new DecodeError('auth-keys tombstone without a key');
    return { type: 'tombstone', keyId: key.toString('utf8') };
  }
  const d = decode(value);
  const type = TYPE_OF_SUBJECT.get(d.subject);
  if (!type) throw new DecodeError(`auth-keys: unexpected subject ${d.subject}`);
  return { type, value: d.value } as KeyEvent;
}

/**
 * Appends `event` (and, after a KeyDeleted, its tombstone) to `auth-keys` and waits for the broker's
 * acknowledgement of all in-sync replicas.
 * @returns the position of the last record written, for read-your-write waits.
 * @throws EncodeError for an invalid value; kafkajs errors when the broker refuses.
 */
export async function appendKeyEvent(
  producer: Producer,
  config: Pick<SharedConfig, 'kafka'>,
  event: Exclude<KeyEvent, { type: 'tombstone' }>,
): Promise<LogPosition> {
  const key = event.value.key_id;
  const messages: { key: string; value: Buffer | null }[] = [
    { key, value: encode(SUBJECT[event.type], event.value) },
  ];
  if (event.type === 'KeyDeleted') messages.push({ key, value: null });
  const [meta] = await producer.send({ topic: topicName(config, 'authKeys'), acks: -1, messages });
  if (!meta || meta.baseOffset === undefined)
    throw new Error('auth-keys append: no offset in the acknowledgement');
  return { partition: meta.partition, offset: BigInt(meta.baseOffset) + BigInt(messages.length - 1) };
}
