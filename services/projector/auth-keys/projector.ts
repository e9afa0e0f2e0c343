/**
 * The auth-keys projector: keeps the `api_keys` read model (migration 002) from the compacted
 * `auth-keys` topic, one statement per batch with the checkpoint (docs/architecture.md "checkpoint written in
 * the same transaction as the rows it covers"), through the checkpointed consumer (lib/log/checkpointed-consumer.ts).
 * Its group is a fresh one per start that commits nothing: Postgres holds the position (every
 * join seeks to the stored checkpoint, so a rebuilt, emptied read model is replayed in full).
 * A record that does not decode, or that Postgres refuses, goes to `auth-keys.dead-letter`.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { Sql } from '../../../lib/db/pool.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
} from '../../../lib/log/checkpointed-consumer.ts';
import type { Logger } from '../../../lib/logger.ts';
import { authKeysProjection } from '../../../lib/projections/specs.ts';
import type { ProjectorConfig } from '../config.ts';

/** See lib/log/checkpointed-consumer.ts. */
export type AuthKeysProjector = CheckpointedConsumer;

/** Builds the projector; its group is `${PROJECTOR_GROUP}-auth-keys-<uuid>`. */
export function buildAuthKeysProjector(deps: {
  config: Pick<ProjectorConfig, 'kafka' | 'projector' | 'db'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): AuthKeysProjector {
  return buildCheckpointedConsumer(authKeysProjection, {
    ...deps,
    // A group of its own per start, committing nothing: a restart right after a crash cannot wait
    // for the dead member's session to expire, and Postgres holds the position anyway.
    groupId: `${deps.config.projector.group}-auth-keys-${randomUUID()}`,
    maxWaitTimeInMs: 500,
    commitOffsets: false,
    options: { registry: deps.registry },
  });
}
