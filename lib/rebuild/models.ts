/**
 * The read models a rebuild knows: which projection checkpoint, topic and tables
 * each one owns, which columns do not come from the log, and how a range of records of one
 * partition is written into a schema. The writers are the live projectors' own pure folds and
 * one-statement stores (their ConsumerSpec: rows and checkpoint together, in the live chunks),
 * called on a pool whose search_path is the shadow schema, so a rebuilt table is produced by
 * exactly the code that keeps the live one.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { CheckpointKey } from '../db/checkpoints.ts';
import type { Sql } from '../db/pool.ts';
import { type ConsumerSpec, chunksOf, decodeAll, writeIsolating } from '../log/consumer-spec.ts';
import type { TopicKey } from '../log/topics.ts';
import {
  authKeysProjection,
  roundsProjection,
  WALLET_PROJECTION,
  walletProjection,
} from '../projections/specs.ts';

/** What writing one range did. */
export interface ApplyResult {
  /** Records that decoded and were projected. */
  readonly events: number;
  /** Records that did not decode and were skipped (never dead-lettered again by a rebuild). */
  readonly skipped: number;
}

/** One rebuildable read model. */
export interface ReadModel {
  /** Name on the command line. */
  readonly name: string;
  readonly description: string;
  /** `projection` of its rows in projection_checkpoints (the live projector's). */
  readonly projection: string;
  /** The topic it is projected from. */
  readonly topic: TopicKey;
  /**
   * Tables swapped in, in the order the swap locks them (the live writer's order: a writer never
   * holds a later one while waiting for an earlier one).
   */
  readonly tables: readonly string[];
  /**
   * Columns written by something other than the projector (per table): copied from the live
   * table at the swap and left out of the comparison.
   */
  readonly carried: Readonly<Record<string, readonly string[]>>;
  /**
   * Writes `messages` (one partition, log order, every offset below `next`) and sets the checkpoint
   * of `key` to `next`, through `sql` (whose search_path is the target schema); amounts in the
   * precision `currencies` (the projector's CRYPTO_CURRENCIES table) gives each currency.
   * @throws the postgres.js error of a failed write (nothing of that statement is stored).
   */
  apply(
    sql: Sql,
    key: CheckpointKey,
    messages: readonly KafkaMessage[],
    next: bigint,
    currencies: Currencies,
  ): Promise<ApplyResult>;
}

/**
 * Writes `messages` with the live projector's spec, in its chunks (each chunk one statement with
 * the checkpoint of its last record; the last one's is `next`).
 */
async function applyRange<E>(
  spec: ConsumerSpec<E>,
  sql: Sql,
  key: CheckpointKey,
  messages: readonly KafkaMessage[],
  next: bigint,
): Promise<ApplyResult> {
  let events = 0;
  let skipped = 0;
  const topicKey = spec.topics[0] as TopicKey;
  for (const chunk of chunksOf(messages, spec.chunkSize, next)) {
    const { items, poison } = decodeAll(spec, topicKey, chunk.messages);
    // A record the live consumer dead-lettered (Postgres refused it) is skipped here too.
    let refused = 0;
    await writeIsolating(spec, sql, { ...key, topicKey }, items, chunk.next, async () => {
      refused += 1;
    });
    events += items.length - refused;
    skipped += poison.length + refused;
  }
  return { events, skipped };
}

/** The read model written by `spec`. */
function readModelOf<E>(
  spec: ConsumerSpec<E>,
  m: Pick<ReadModel, 'name' | 'description' | 'tables' | 'carried'>,
): ReadModel {
  return {
    ...m,
    projection: spec.name,
    topic: spec.topics[0] as TopicKey,
    apply: (sql, key, messages, next) => applyRange(spec, sql, key, messages, next),
  };
}

const rounds = readModelOf(roundsProjection, {
  name: 'rounds',
  description: 'round history and the game list (rounds, games) from the rounds topic',
  tables: ['rounds', 'games'],
  carried: {},
});

const apiKeys = readModelOf(authKeysProjection, {
  name: 'api-keys',
  description:
    'the API key listing (api_keys) from the auth-keys topic; last_used_at is kept from the live table',
  tables: ['api_keys'],
  // Written by the API in batches (services/api/auth/last-used.ts), not from the log.
  carried: { api_keys: ['last_used_at'] },
});

// Its spec depends on the currency table (demo balances in each currency's precision), so it is
// made per write from the table the rebuild passes.
const wallet: ReadModel = {
  name: 'wallet',
  description: 'wallet_transactions and wallet_balances from the wallet-transactions topic',
  tables: ['wallet_transactions', 'wallet_balances'],
  carried: {},
  projection: WALLET_PROJECTION,
  topic: 'walletTransactions',
  apply: (sql, key, messages, next, currencies) =>
    applyRange(walletProjection(currencies), sql, key, messages, next),
};

/** Every rebuildable read model, by command-line name. */
export const READ_MODELS: ReadonlyMap<string, ReadModel> = new Map(
  [rounds, apiKeys, wallet].map((m) => [m.name, m]),
);
