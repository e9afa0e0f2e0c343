/**
 * Wallet and access-session events (docs/contract.md "Topics"): Avro, Confluent wire format,
 * schema ids 5..13 in schemas/registry.json, subject = record full name, so the schema id alone
 * names the event type.
 *
 * `wallet-transactions` is keyed `operator_id:user_id` (a player's events stay in order);
 * `access-sessions` by session id.
 */
import type { Producer } from 'kafkajs';
import type { AccessEvent, WalletEvent } from '../../rules/wallet/events.ts';
import type { SharedConfig } from '../config/shared.ts';
import { DecodeError } from '../errors.ts';
import { decode, encode } from './codec.ts';
import { topicName } from './topics.ts';

export type {
  AccessEvent,
  BetContext,
  BetPlaced,
  BetRejected,
  BetSettled,
  CallbackFailed,
  CallbackSucceeded,
  RollbackRequested,
  SessionCreated,
  SessionExpired,
  SessionOpened,
  WalletEvent,
} from '../../rules/wallet/events.ts';
export { walletKey } from '../../rules/wallet/events.ts';

const WALLET_TYPES = [
  'BetPlaced',
  'CallbackSucceeded',
  'CallbackFailed',
  'BetRejected',
  'RollbackRequested',
  'BetSettled',
] as const;
const ACCESS_TYPES = ['SessionCreated', 'SessionOpened', 'SessionExpired'] as const;
const subjectOf = (type: string): string =>
  `${(ACCESS_TYPES as readonly string[]).includes(type) ? 'casino.access' : 'casino.wallet'}.${type}`;

function decodeAs<T extends { type: string }>(
  value: Buffer | null,
  types: readonly string[],
  topic: string,
): T {
  if (value === null) throw new DecodeError(`${topic}: record without a value`);
  const d = decode(value);
  const type = d.subject.slice(d.subject.lastIndexOf('.') + 1);
  if (subjectOf(type) !== d.subject || !types.includes(type))
    throw new DecodeError(`${topic}: unexpected subject ${d.subject}`);
  return { type, value: d.value } as unknown as T;
}

/**
 * Decodes one record of `wallet-transactions`.
 * @throws DecodeError for a null value, another subject or undecodable bytes.
 */
export function decodeWalletEvent(value: Buffer | null): WalletEvent {
  return decodeAs<WalletEvent>(value, WALLET_TYPES, 'wallet-transactions');
}

/**
 * Decodes one record of `access-sessions`.
 * @throws DecodeError for a null value, another subject or undecodable bytes.
 */
export function decodeAccessEvent(value: Buffer | null): AccessEvent {
  return decodeAs<AccessEvent>(value, ACCESS_TYPES, 'access-sessions');
}

/** Encodes an event to its Confluent-framed Avro bytes. @throws EncodeError for an invalid value. */
export function encodeEvent(event: WalletEvent | AccessEvent): Buffer {
  return encode(subjectOf(event.type), event.value);
}

/**
 * Appends wallet events of one player (same key, in order) and waits for all in-sync replicas.
 * @throws EncodeError for an invalid value; kafkajs errors when the broker refuses.
 */
export async function appendWalletEvents(
  producer: Producer,
  config: Pick<SharedConfig, 'kafka'>,
  key: string,
  events: readonly WalletEvent[],
): Promise<void> {
  await producer.send({
    topic: topicName(config, 'walletTransactions'),
    acks: -1,
    messages: events.map((e) => ({ key, value: encodeEvent(e) })),
  });
}

/**
 * Appends one access-session event (key = session id) and waits for all in-sync replicas.
 * @throws EncodeError for an invalid value; kafkajs errors when the broker refuses.
 */
export async function appendAccessEvent(
  producer: Producer,
  config: Pick<SharedConfig, 'kafka'>,
  event: AccessEvent,
): Promise<void> {
  await producer.send({
    topic: topicName(config, 'accessSessions'),
    acks: -1,
    messages: [{ key: event.value.session_id, value: encodeEvent(event) }],
  });
}
