/**
 * The dead-letter topics ops can list, inspect and replay, each with how its
 * headers name the reason and the source, which headers are the dead-letter's own (stripped on
 * replay), and how its value decodes:
 * - `rounds.dead-letter`: records of `rounds` the rounds projector could not decode; the original
 *   headers plus `dlq-reason`, `dlq-topic`, `dlq-partition`, `dlq-offset`, `dlq-projection`
 *   (lib/projections/rounds/decode.ts).
 * - `wallet-transactions.dead-letter`: records of `wallet-transactions` a checkpointed consumer
 *   (the wallet projector, settlement, the wallet saga) could not decode or write; the same `dlq-*`
 *   headers (lib/log/dead-letter.ts). Callbacks the saga parks are not here: they stay in Postgres
 *   (`wallet_callbacks`), listed and re-driven by `dead-letters callbacks …` (services/dead-letters/callbacks.ts).
 */
import type { IHeaders } from 'kafkajs';
import { DLQ_HEADERS } from '../log/dead-letter.ts';
import { decodeRoundEvent } from '../log/rounds-codec.ts';
import { TOPICS, type TopicKey } from '../log/topics.ts';
import { decodeWalletEvent } from '../log/wallet-events.ts';
import { DeadLetterError } from './errors.ts';

/** What a dead-letter record says about itself, whatever its topic. */
export interface DeadLetterInfo {
  readonly reason: string | null;
  /** Topic, partition and offset the record was read from before it was dead-lettered. */
  readonly source: {
    readonly topic: string | null;
    readonly partition: number | null;
    readonly offset: string | null;
  };
  /** The wallet event's tx_id, when its value decodes (wallet only). */
  readonly txId: number | null;
  /** The wallet event's type, when its value decodes (wallet only). */
  readonly kind: string | null;
}

export interface DeadLetterTopic {
  /** Short name on the command line. */
  readonly name: string;
  readonly topic: TopicKey;
  /** Where a replay re-appends a record. */
  readonly source: TopicKey;
  /** Headers added by the dead-lettering, left out of a replayed record. */
  readonly ownHeaders: readonly string[];
  info(headers: Readonly<Record<string, string>>, value: Buffer | null): DeadLetterInfo;
  /** The decoded value, as plain JSON. @throws DecodeError when it does not decode (now). */
  decode(value: Buffer | null): unknown;
}

const num = (v: string | undefined) => (v === undefined || !/^\d+$/.test(v) ? null : Number(v));

/** Reason and source from the `dlq-*` headers of lib/log/dead-letter.ts. */
const dlqInfo = (h: Readonly<Record<string, string>>) => ({
  reason: h[DLQ_HEADERS.reason] ?? null,
  source: {
    topic: h[DLQ_HEADERS.topic] ?? null,
    partition: num(h[DLQ_HEADERS.partition]),
    offset: h[DLQ_HEADERS.offset] ?? null,
  },
});

const rounds: DeadLetterTopic = {
  name: 'rounds',
  topic: 'roundsDeadLetter',
  source: 'rounds',
  ownHeaders: Object.values(DLQ_HEADERS),
  info: (h) => ({ ...dlqInfo(h), txId: null, kind: null }),
  decode: (value) => decodeRoundEvent(value),
};

/** tx_id and type of a wallet event, or nulls when it does not decode. */
function walletEventOf(value: Buffer | null): { txId: number | null; kind: string | null } {
  try {
    const e = decodeWalletEvent(value);
    const tx = (e.value as { tx_id?: unknown }).tx_id;
    return { txId: typeof tx === 'number' ? tx : null, kind: e.type };
  } catch {
    return { txId: null, kind: null };
  }
}

const wallet: DeadLetterTopic = {
  name: 'wallet',
  topic: 'walletDeadLetter',
  source: 'walletTransactions',
  ownHeaders: Object.values(DLQ_HEADERS),
  info: (h, value) => ({ ...dlqInfo(h), ...walletEventOf(value) }),
  decode: (value) => decodeWalletEvent(value),
};

/** Every dead-letter topic, by short name. */
export const DEAD_LETTER_TOPICS: readonly DeadLetterTopic[] = [rounds, wallet];

/**
 * The dead-letter topic called `name`: its short name (`rounds`, `wallet`) or its topic name without
 * the namespace (`rounds.dead-letter`, `wallet-transactions.dead-letter`).
 * @throws DeadLetterError UNKNOWN_TOPIC.
 */
export function deadLetterTopic(name: string): DeadLetterTopic {
  const t = DEAD_LETTER_TOPICS.find((d) => d.name === name || TOPICS[d.topic].base === name);
  if (!t)
    throw new DeadLetterError(
      'UNKNOWN_TOPIC',
      `unknown dead-letter topic "${name}"; one of: ${DEAD_LETTER_TOPICS.map((d) => `${d.name} (${TOPICS[d.topic].base})`).join(', ')}`,
    );
  return t;
}

/** Header values as strings (kafkajs gives Buffers). */
export function headerStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  }
  return out;
}
