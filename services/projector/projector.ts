/**
 * The rounds projector: consumes the `rounds` topic and keeps the Postgres read models (round
 * history and the game list) through the shared consumer of live-projector.ts (Postgres holds the
 * position; each chunk's rows, game-list update and checkpoint are ONE atomic statement,
 * rounds/store.ts). Undecodable records go to the dead-letter topic.
 *
 * Dead-lettering is at-least-once: a crash between the dead-letter append and the write that
 * moves the checkpoint past the record appends it again on restart.
 */
import type { Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import type { Sql } from '../../lib/db/pool.ts';
import {
  buildLiveProjector,
  type ProjectorOptions as LiveProjectorOptions,
  type Projector,
} from '../../lib/log/checkpointed-consumer.ts';
import type { ProjectionSpec } from '../../lib/log/projection-spec.ts';
import { topicName } from '../../lib/log/topics.ts';
import type { Logger } from '../../lib/logger.ts';
import { createProjectorMetrics } from './metrics.ts';
import { deadLetterMessage, decodeMessages } from './rounds/decode.ts';
import { type OffsetEvent, writeChunk } from './rounds/store.ts';

/** Name of this projection in `projection_checkpoints` and in the `dlq-projection` header. */
export const ROUNDS_PROJECTION = 'rounds';

/** The rounds projection: decoded rounds, written at most 5000 per statement. */
export const roundsProjection: ProjectionSpec<OffsetEvent> = {
  name: ROUNDS_PROJECTION,
  topic: 'rounds',
  chunkSize: 5000,
  decode: decodeMessages,
  write: async (sql, key, events, next) => (await writeChunk(sql, key, events, next)).checkpoint,
};

export interface ProjectorOptions extends LiveProjectorOptions {
  /** Most records per atomic write (5000). */
  readonly chunkSize?: number;
}

export interface RoundsProjectorDeps {
  readonly config: Config;
  readonly kafka: Kafka;
  /** The pool to start with; after a connection failure the projector uses pools of its own (see db-gate.ts). */
  readonly sql: Sql;
  readonly logger: Logger;
  readonly options?: ProjectorOptions;
}

/** See live-projector.ts; the group is `config.projector.group`. */
export type RoundsProjector = Projector;

/** Builds the projector; nothing connects until `start()`. */
export function buildRoundsProjector(deps: RoundsProjectorDeps): RoundsProjector {
  const { config, kafka } = deps;
  const opts = deps.options ?? {};
  const topic = topicName(config, 'rounds');
  const dlqTopic = topicName(config, 'roundsDeadLetter');
  const log = deps.logger.child({ component: 'rounds-projector', topic });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const metrics = createProjectorMetrics(opts.registry);
  const projector = buildLiveProjector(
    { ...roundsProjection, chunkSize: opts.chunkSize ?? roundsProjection.chunkSize },
    {
      config,
      kafka,
      sql: deps.sql,
      logger: deps.logger,
      groupId: config.projector.group,
      maxWaitTimeInMs: 1000,
      commitOffsets: true,
      options: { ...opts, registry: metrics.registry },
      async onUndecodable(undecodable, partition) {
        const origin = { topic, partition, projection: ROUNDS_PROJECTION };
        await producer.send({
          topic: dlqTopic,
          messages: undecodable.map((u) => deadLetterMessage(u, origin)),
        });
        metrics.deadLettered.inc({ projection: ROUNDS_PROJECTION, topic }, undecodable.length);
        for (const u of undecodable)
          log.warn({ partition, offset: u.message.offset, reason: u.reason }, 'record dead-lettered');
      },
    },
  );
  return {
    ...projector,
    async start() {
      await producer.connect();
      await projector.start();
    },
    async stop() {
      await projector.stop();
      await producer.disconnect().catch(() => {});
    },
  };
}
