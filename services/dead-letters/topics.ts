/**
 * The dead-letter topics ops can list, inspect and replay (issue 6 item 3), each with how its
 * headers name the reason and the source, which headers are the dead-letter's own (stripped on
 * replay), and how its value decodes:
 * - `rounds.dead-letter`: records of `rounds` the rounds projector could not decode; the original
 *   headers plus `dlq-reason`, `dlq-topic`, `dlq-partition`, `dlq-offset`, `dlq-projection`
 *   (services/projector/rounds/decode.ts).
 * - `wallet-transactions.dead-letter`: events whose operator callback the wallet saga parked;
 *   headers `reason`, `attempts`, `kind`, `tx-id`, `source-topic`, `source-partition`,
 *   `source-offset` (services/wallet-saga/executor.ts).
 */
import type { IHeaders } from 'kafkajs';
import { DLQ_HEADERS } from '../../lib/log/dead-letter.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { TOPICS, type TopicKey } from '../../lib/log/topics.ts';
import { decodeWalletEvent } from '../../lib/log/wallet-events.ts';
import type { DeadLettersConfig } from './config.ts';
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
  /** The parked callback's provider_tx_id (wallet only). */
  readonly txId: number | null;
  /** The parked callback's kind (wallet only). */
  readonly kind: string | null;
  readonly attempts: number | null;
}

export interface DeadLetterTopic {
  /** Short name on the command line. */
  readonly name: string;
  readonly topic: TopicKey;
  /** Where a replay re-appends a record. */
  readonly source: TopicKey;
  /** Headers added by the dead-lettering, left out of a replayed record. */
  readonly ownHeaders: readonly string[];
  info(headers: Readonly<Record<string, string>>): DeadLetterInfo;
  /** The decoded value, as plain JSON. @throws DecodeError when it does not decode (now). */
  decode(value: Buffer | null): unknown;
  /**
   * A consumer group whose committed offset a replay moves over the prefix of records all replayed
   * (the wallet saga's parked-backlog metric reads it); none for rounds.
   */
  readonly progressGroup?: (config: Pick<DeadLettersConfig, 'deadLetters'>) => string;
}

const num = (v: string | undefined) => (v === undefined || !/^\d+$/.test(v) ? null : Number(v));

const rounds: DeadLetterTopic = {
  name: 'rounds',
  topic: 'roundsDeadLetter',
  source: 'rounds',
  ownHeaders: Object.values(DLQ_HEADERS),
  info: (h) => ({
    reason: h[DLQ_HEADERS.reason] ?? null,
    source: {
      topic: h[DLQ_HEADERS.topic] ?? null,
      partition: num(h[DLQ_HEADERS.partition]),
      offset: h[DLQ_HEADERS.offset] ?? null,
    },
    txId: null,
    kind: null,
    attempts: null,
  }),
  decode: (value) => decodeRoundEvent(value),
};

const wallet: DeadLetterTopic = {
  name: 'wallet',
  topic: 'walletDeadLetter',
  source: 'walletTransactions',
  ownHeaders: ['reason', 'attempts', 'kind', 'tx-id', 'source-topic', 'source-partition', 'source-offset'],
  info: (h) => ({
    reason: h.reason ?? null,
    source: {
      topic: h['source-topic'] ?? null,
      partition: num(h['source-partition']),
      offset: h['source-offset'] ?? null,
    },
    txId: num(h['tx-id']),
    kind: h.kind ?? null,
    attempts: num(h.attempts),
  }),
  decode: (value) => decodeWalletEvent(value),
  progressGroup: (config) => config.deadLetters.walletReplayGroup,
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
