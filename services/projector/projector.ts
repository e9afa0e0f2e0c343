/**
 * The rounds projector: consumes the `rounds` topic and keeps the Postgres read models (round
 * history and the game list) through the checkpointed consumer (lib/log/checkpointed-consumer.ts:
 * Postgres holds the position; each chunk's rows, game-list update and checkpoint are ONE atomic
 * statement, lib/projections/rounds/store.ts). A record that does not decode, that the admission rule refuses
 * (rules/rounds/admission.ts: from the future or the past, or a round id stored with other
 * content), or that Postgres refuses, goes to `rounds.dead-letter` with the reason, and the rounds
 * after it are projected.
 */
import type { Kafka } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
  type CheckpointedConsumerOptions,
} from '../../lib/log/checkpointed-consumer.ts';
import type { Logger } from '../../lib/logger.ts';
import { roundsProjection } from '../../lib/projections/specs.ts';
import type { ProjectorConfig } from './config.ts';

export interface ProjectorOptions extends CheckpointedConsumerOptions {
  /** Most records per atomic write (5000). */
  readonly chunkSize?: number;
}

export interface RoundsProjectorDeps {
  readonly config: Pick<ProjectorConfig, 'kafka' | 'db' | 'projector'>;
  readonly kafka: Kafka;
  /** The pool to start with; after a connection failure the projector uses pools of its own (lib/db/gate.ts). */
  readonly sql: Sql;
  readonly logger: Logger;
  readonly options?: ProjectorOptions;
}

/** See lib/log/checkpointed-consumer.ts; the group is `config.projector.group`. */
export type RoundsProjector = CheckpointedConsumer;

/** Builds the projector; nothing connects until `start()`. */
export function buildRoundsProjector(deps: RoundsProjectorDeps): RoundsProjector {
  const opts = deps.options ?? {};
  return buildCheckpointedConsumer(
    { ...roundsProjection, chunkSize: opts.chunkSize ?? roundsProjection.chunkSize },
    {
      config: deps.config,
      kafka: deps.kafka,
      sql: deps.sql,
      logger: deps.logger,
      groupId: deps.config.projector.group,
      maxWaitTimeInMs: 1000,
      commitOffsets: true,
      options: opts,
    },
  );
}
