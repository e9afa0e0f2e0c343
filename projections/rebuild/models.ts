/**
 * The read models a rebuild knows (issue 6 item 1): which projection checkpoint, topic and tables
 * each one owns, which columns do not come from the log, and how a range of records of one
 * partition is written into a schema. The writers are the live projectors' own pure folds and
 * one-statement stores (rows and checkpoint together), called on a pool whose search_path is the
 * shadow schema, so a rebuilt table is produced by exactly the code that keeps the live one.
 */
import type { KafkaMessage } from 'kafkajs';
import { decodeKeyEvent, type KeyEvent } from '../../lib/auth/key-events.ts';
import type { Sql } from '../../lib/db.ts';
import type { TopicKey } from '../../lib/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/wallet/events.ts';
import { foldKeyEvents } from '../auth-keys/projection.ts';
import { AUTH_KEYS_PROJECTION } from '../auth-keys/projector.ts';
import { writeKeyPatches } from '../auth-keys/store.ts';
import { ROUNDS_PROJECTION } from '../projector.ts';
import { decodeMessages } from '../rounds/decode.ts';
import { type CheckpointKey, writeChunk } from '../rounds/store.ts';
import { projectWallet } from '../wallet/projection.ts';
import { WALLET_PROJECTION } from '../wallet/projector.ts';
import { writeWallet } from '../wallet/store.ts';

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
   * of `key` to `next`, through `sql` (whose search_path is the target schema).
   * @throws the postgres.js error of a failed write (nothing of that statement is stored).
   */
  apply(sql: Sql, key: CheckpointKey, messages: readonly KafkaMessage[], next: bigint): Promise<ApplyResult>;
}

/** The rounds projector writes at most this many records per statement (projections/projector.ts). */
const ROUNDS_CHUNK = 5000;

const rounds: ReadModel = {
  name: 'rounds',
  description: 'round history and the game list (rounds, games) from the rounds topic',
  projection: ROUNDS_PROJECTION,
  topic: 'rounds',
  tables: ['rounds', 'games'],
  carried: {},
  async apply(sql, key, messages, next) {
    let events = 0;
    let skipped = 0;
    if (messages.length === 0) await writeChunk(sql, key, [], next);
    for (let i = 0; i < messages.length; i += ROUNDS_CHUNK) {
      const chunk = messages.slice(i, i + ROUNDS_CHUNK);
      const decoded = decodeMessages(chunk);
      const last = chunk.at(-1) as KafkaMessage;
      const chunkNext = i + ROUNDS_CHUNK >= messages.length ? next : BigInt(last.offset) + 1n;
      await writeChunk(sql, key, decoded.events, chunkNext);
      events += decoded.events.length;
      skipped += decoded.undecodable.length;
    }
    return { events, skipped };
  },
};

const apiKeys: ReadModel = {
  name: 'api-keys',
  description:
    'the API key listing (api_keys) from the auth-keys topic; last_used_at is kept from the live table',
  projection: AUTH_KEYS_PROJECTION,
  topic: 'authKeys',
  tables: ['api_keys'],
  // Written by the API in batches (services/api/auth/last-used.ts), not from the log.
  carried: { api_keys: ['last_used_at'] },
  async apply(sql, key, messages, next) {
    const events: KeyEvent[] = [];
    for (const m of messages) {
      try {
        events.push(decodeKeyEvent(m.key, m.value));
      } catch {
        // the live projector logs and skips such a record too
      }
    }
    await writeKeyPatches(sql, key, foldKeyEvents(events), next);
    return { events: events.length, skipped: messages.length - events.length };
  },
};

const wallet: ReadModel = {
  name: 'wallet',
  description: 'wallet_transactions and wallet_balances from the wallet-transactions topic',
  projection: WALLET_PROJECTION,
  topic: 'walletTransactions',
  tables: ['wallet_transactions', 'wallet_balances'],
  carried: {},
  async apply(sql, key, messages, next) {
    const events: WalletEvent[] = [];
    for (const m of messages) {
      try {
        events.push(decodeWalletEvent(m.value));
      } catch {
        // the live projector logs, counts and skips such a record too
      }
    }
    const { patches, balances } = projectWallet(events);
    await writeWallet(sql, key, patches, balances, next);
    return { events: events.length, skipped: messages.length - events.length };
  },
};

/** Every rebuildable read model, by command-line name. */
export const READ_MODELS: ReadonlyMap<string, ReadModel> = new Map(
  [rounds, apiKeys, wallet].map((m) => [m.name, m]),
);
