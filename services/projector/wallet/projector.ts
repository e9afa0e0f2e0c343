/**
 * The wallet projector: keeps `wallet_transactions` and `wallet_balances` (migration 003) from the
 * `wallet-transactions` topic, one statement per batch with the checkpoint (projection `wallet`
 * in projection_checkpoints), through the checkpointed consumer (lib/log/checkpointed-consumer.ts): group
 * `${PROJECTOR_GROUP}-wallet`, Postgres holds the position, the group's offset is a hint.
 *
 * A record that does not decode, or that Postgres refuses, goes to `wallet-transactions.dead-letter`
 * with `dlq-*` headers (beside the callbacks the wallet saga parks there, which carry `kind`).
 */
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Sql } from '../../../lib/db/pool.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
} from '../../../lib/log/checkpointed-consumer.ts';
import type { ConsumerSpec } from '../../../lib/log/consumer-spec.ts';
import { decodeWalletEvent, type WalletEvent } from '../../../lib/log/wallet-events.ts';
import type { Logger } from '../../../lib/logger.ts';
import { type Currencies, currencyTable } from '../../../rules/money/currencies.ts';
import type { ProjectorConfig } from '../config.ts';
import { projectWallet } from './projection.ts';
import { writeWallet } from './store.ts';

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

/** See lib/log/checkpointed-consumer.ts. */
export type WalletProjector = CheckpointedConsumer;

/** Builds the projector; nothing connects until `start()`. */
export function buildWalletProjector(deps: {
  config: Pick<ProjectorConfig, 'kafka' | 'projector' | 'db' | 'money'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): WalletProjector {
  return buildCheckpointedConsumer(walletProjection(currencyTable(deps.config.money.crypto)), {
    ...deps,
    groupId: `${deps.config.projector.group}-wallet`,
    maxWaitTimeInMs: 500,
    commitOffsets: true,
    options: { registry: deps.registry },
  });
}
