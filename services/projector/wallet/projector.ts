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
import type { Logger } from '../../../lib/logger.ts';
import { walletProjection } from '../../../lib/projections/specs.ts';
import { currencyTable } from '../../../rules/money/currencies.ts';
import type { ProjectorConfig } from '../config.ts';

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
