/**
 * The rounds projector: consumes the `rounds` topic and keeps the Postgres read models (round
 * history and the game list) through the checkpointed consumer (lib/log/checkpointed-consumer.ts:
 * Postgres holds the position; each chunk's rows, game-list update and checkpoint are ONE atomic
 * statement, rounds/store.ts). A record that does not decode, that the admission rule refuses
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
import type { ConsumerSpec } from '../../lib/log/consumer-spec.ts';
import type { Logger } from '../../lib/logger.ts';
import type { ProjectorConfig } from './config.ts';
import { decodeRecord } from './rounds/decode.ts';
import { type OffsetEvent, refuseConflicts, writeChunk } from './rounds/store.ts';

/** Name of this projection in `projection_checkpoints` and in the `dlq-projection` header. */
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
