/**
 * The read models' projections as checkpointed-consumer specs (lib/log/consumer-spec.ts): how a
 * record decodes and how a chunk of them is written with its checkpoint. The live projectors
 * (services/projector) consume through them and a rebuild (lib/rebuild/models.ts) writes its shadow
 * tables through the same objects, so a rebuilt table is produced by exactly the code that keeps
 * the live one.
 */

import type { Currencies } from '../../rules/money/currencies.ts';
import type { KeyEvent } from '../auth/key-events.ts';
import { decodeKeyEvent } from '../auth/key-events.ts';
import type { ConsumerSpec } from '../log/consumer-spec.ts';
import { decodeWalletEvent, type WalletEvent } from '../log/wallet-events.ts';
import { foldKeyEvents } from './auth-keys/projection.ts';
import { writeKeyPatches } from './auth-keys/store.ts';
import { decodeRecord } from './rounds/decode.ts';
import { type OffsetEvent, refuseConflicts, writeChunk } from './rounds/store.ts';
import { projectWallet } from './wallet/projection.ts';
import { writeWallet } from './wallet/store.ts';

/** Name of the rounds projection in `projection_checkpoints` and in the `dlq-projection` header. */
export const ROUNDS_PROJECTION = 'rounds';

/**
 * The rounds projection: finished rounds, written at most 5000 records per statement; the
 * lifecycle events and cash-outs of the topic decode to null and only move the checkpoint.
 * Partitions are written concurrently (up to 4 at once): each holds its own games (key = slug)
 * and checkpoint, and the game-list update locks its rows in game id order, so one partition's
 * statement runs in Postgres while the next batch of another is fetched and decoded (
 * 37% of psql COPY one partition at a time, above 60% so on 2 cores).
 */
export const roundsProjection: ConsumerSpec<OffsetEvent | null> = {
  name: ROUNDS_PROJECTION,
  topics: ['rounds'],
  chunkSize: 5000,
  partitionsAtOnce: 4,
  decode: decodeRecord,
  write: async (sql, key, events, next) => {
    const rounds = events.filter((e): e is OffsetEvent => e !== null);
    await refuseConflicts(sql, rounds);
    return { checkpoint: (await writeChunk(sql, key, rounds, next)).checkpoint };
  },
};

/** Name of the wallet projection in `projection_checkpoints`. */
export const WALLET_PROJECTION = 'wallet';

/**
 * The wallet projection: a whole batch folded into row patches and balances and written at once;
 * demo balances in the precision `currencies` (ISO 4217 + CRYPTO_CURRENCIES) gives each currency.
 */
export function walletProjection(currencies: Currencies): ConsumerSpec<WalletEvent> {
  return {
    name: WALLET_PROJECTION,
    topics: ['walletTransactions'],
    chunkSize: Number.POSITIVE_INFINITY,
    decode: (m) => decodeWalletEvent(m.value),
    async write(sql, key, events, next) {
      const { patches, balances } = projectWallet(events);
      await writeWallet(sql, key, patches, balances, next, currencies);
      return { checkpoint: next };
    },
  };
}

/** Name of the auth-keys projection in `projection_checkpoints`. */
export const AUTH_KEYS_PROJECTION = 'auth-keys';

/** The auth-keys projection: a whole batch folded into one patch per key and written at once. */
export const authKeysProjection: ConsumerSpec<KeyEvent> = {
  name: AUTH_KEYS_PROJECTION,
  topics: ['authKeys'],
  chunkSize: Number.POSITIVE_INFINITY,
  decode: (m) => decodeKeyEvent(m.key, m.value),
  async write(sql, key, events, next) {
    await writeKeyPatches(sql, key, foldKeyEvents(events), next);
    return { checkpoint: next };
  },
};
