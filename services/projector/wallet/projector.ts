/**
 * The wallet projector: keeps `wallet_transactions` and `wallet_balances` (migration 003) from the
 * `wallet-transactions` topic, one statement per batch with the checkpoint (projection `wallet`
 * in projection_checkpoints), through the shared consumer of live-projector.ts: group
 * `${PROJECTOR_GROUP}-wallet`, Postgres holds the position, the group's offset is a hint.
 *
 * Undecodable records are logged, counted and skipped, not dead-lettered: the topic's dead-letter
 * topic belongs to the wallet-saga, whose replay script re-appends what it holds.
 */
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Config } from '../../../lib/config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { buildLiveProjector, type Projector } from '../../../lib/log/checkpointed-consumer.ts';
import { decodeEach, type ProjectionSpec } from '../../../lib/log/projection-spec.ts';
import { decodeWalletEvent, type WalletEvent } from '../../../lib/log/wallet-events.ts';
import type { Logger } from '../../../lib/logger.ts';
import { projectWallet } from './projection.ts';
import { writeWallet } from './store.ts';

export const WALLET_PROJECTION = 'wallet';

/** The wallet projection: a whole batch folded into row patches and balances and written at once. */
export const walletProjection: ProjectionSpec<WalletEvent> = {
  name: WALLET_PROJECTION,
  topic: 'walletTransactions',
  chunkSize: Number.POSITIVE_INFINITY,
  decode: (messages) => decodeEach(messages, (m) => decodeWalletEvent(m.value)),
  async write(sql, key, events, next) {
    const { patches, balances } = projectWallet(events);
    await writeWallet(sql, key, patches, balances, next);
    return next;
  },
};

/** See live-projector.ts. */
export type WalletProjector = Projector;

/** Builds the projector; nothing connects until `start()`. */
export function buildWalletProjector(deps: {
  config: Pick<Config, 'kafka' | 'projector' | 'db'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): WalletProjector {
  return buildLiveProjector(walletProjection, {
    ...deps,
    groupId: `${deps.config.projector.group}-wallet`,
    maxWaitTimeInMs: 500,
    commitOffsets: true,
    options: { registry: deps.registry },
  });
}
