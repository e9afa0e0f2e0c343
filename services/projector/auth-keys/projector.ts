/**
 * The auth-keys projector: keeps the `api_keys` read model (migration 002) from the compacted
 * `auth-keys` topic, one statement per batch with the checkpoint (DESIGN.md "checkpoint written in
 * the same transaction as the rows it covers"), through the shared consumer of live-projector.ts.
 * Its group is a fresh one per start that commits nothing: Postgres holds the position (every
 * join seeks to the stored checkpoint, so a rebuilt, emptied read model is replayed in full).
 * Undecodable records are logged and skipped (the topic is written only by the API).
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import { decodeKeyEvent, type KeyEvent } from '../../../lib/auth/key-events.ts';
import type { Config } from '../../../lib/config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { buildLiveProjector, type Projector } from '../../../lib/log/checkpointed-consumer.ts';
import { decodeEach, type ProjectionSpec } from '../../../lib/log/projection-spec.ts';
import type { Logger } from '../../../lib/logger.ts';
import { foldKeyEvents } from './projection.ts';
import { writeKeyPatches } from './store.ts';

export const AUTH_KEYS_PROJECTION = 'auth-keys';

/** The auth-keys projection: a whole batch folded into one patch per key and written at once. */
export const authKeysProjection: ProjectionSpec<KeyEvent> = {
  name: AUTH_KEYS_PROJECTION,
  topic: 'authKeys',
  chunkSize: Number.POSITIVE_INFINITY,
  decode: (messages) => decodeEach(messages, (m) => decodeKeyEvent(m.key, m.value)),
  async write(sql, key, events, next) {
    await writeKeyPatches(sql, key, foldKeyEvents(events), next);
    return next;
  },
};

/** See live-projector.ts. */
export type AuthKeysProjector = Projector;

/** Builds the projector; its group is `${PROJECTOR_GROUP}-auth-keys-<uuid>`. */
export function buildAuthKeysProjector(deps: {
  config: Pick<Config, 'kafka' | 'projector' | 'db'>;
  kafka: Kafka;
  sql: Sql;
  logger: Logger;
  /** Registry shared with the process's other projections (a new one by default). */
  registry?: Registry;
}): AuthKeysProjector {
  return buildLiveProjector(authKeysProjection, {
    ...deps,
    // A group of its own per start, committing nothing: a restart right after a crash cannot wait
    // for the dead member's session to expire, and Postgres holds the position anyway.
    groupId: `${deps.config.projector.group}-auth-keys-${randomUUID()}`,
    maxWaitTimeInMs: 500,
    commitOffsets: false,
    options: { registry: deps.registry },
  });
}
