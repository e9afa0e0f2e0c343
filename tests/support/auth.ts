/**
 * Test support for the auth integration tests (not a test file): an API with access control on a
 * real broker and Postgres, in a topic namespace and schema of its own, with an admin key.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kafka, Producer } from 'kafkajs';
import { type KeyTable, startKeyTable } from '../../lib/auth/key-table.ts';
import { loadTokenSecret } from '../../lib/auth/token-secret.ts';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { createRoundPhases, type RoundPhases } from '../../lib/log/round-phases.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import { createEngineClient } from '../../services/api/access/engine-client.ts';
import { buildApi } from '../../services/api/app.ts';
import { ensureAdminKey } from '../../services/api/auth/bootstrap.ts';
import { LastUsed } from '../../services/api/auth/guard.ts';
import { type Config, loadConfig } from './config.ts';

export interface AuthTestApi {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly kafka: Kafka;
  readonly table: KeyTable;
  readonly producer: Producer;
  /** Secret of the admin key (AUTH_ADMIN_KEY of this test). */
  readonly adminKey: string;
  readonly sql: Sql;
  /** The app's per-key last-use record (drained by a LastUsedWriter when a test starts one). */
  readonly lastUsed: LastUsed;
  /** Each game's round phase, read from this test's `rounds` topic as the API reads it. */
  readonly phases: RoundPhases;
  /** Sum of the high-water marks of `auth-keys`: unchanged means nothing was appended. */
  keyTopicEnd(): Promise<bigint>;
  /** The same for `rounds`. */
  roundsTopicEnd(): Promise<bigint>;
  close(): Promise<void>;
}

/** Starts the API with auth; `overrides` are settings (environment variable names) of tests/support/config.ts. */
export async function startAuthTestApi(
  overrides: Record<string, string | number> = {},
  options: { logger?: Logger } = {},
): Promise<AuthTestApi> {
  const id = randomBytes(4).toString('hex');
  const adminKey = `sk_live_${randomBytes(32).toString('hex')}`;
  const config = loadConfig(process.env, {
    TOPIC_NAMESPACE: `t-auth-${id}-`,
    DATABASE_SCHEMA: `t_auth_${id}`,
    TOPIC_PARTITIONS: 1,
    PROJECTOR_GROUP: `t-auth-${id}-projector`,
    LOG_LEVEL: 'silent',
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    AUTH_ADMIN_KEY: adminKey,
    ...overrides,
  });
  const logger = options.logger ?? createLogger('auth-test', config.process.logLevel);
  const sql: Sql = createSql(config, { max: 3 });
  await migrate(sql, config.db.schema);
  const kafka = createKafka(config, `test-auth-${id}`, createLogger('test', 'error'));
  const setup = kafka.admin();
  await setup.connect();
  await ensureTopics(setup, config, ['rounds', 'authKeys']);
  await setup.disconnect();
  // One registry for the app and the key table's consumer lag, as main.ts wires them.
  const registry = createServiceRegistry('api');
  const table = await startKeyTable({ config, kafka, logger, registry });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await ensureAdminKey({ config, table, producer, now: Date.now() });
  const lastUsed = new LastUsed();
  const phases = createRoundPhases({ kafka, config, logger });
  await phases.start();
  // No engine runs unless a test starts one: a cash-out then answers 503.
  const engine = createEngineClient(config.api.engineUrl, await loadTokenSecret(config.auth), 1000);
  const app = await buildApi({
    config,
    sql,
    logger,
    registry,
    auth: { table, producer, lastUsed },
    play: { phases, engine },
  });
  const topic = topicName(config, 'authKeys');
  const topicEnd = async (name: string) => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const offs = await admin.fetchTopicOffsets(name);
      return offs.reduce((s, o) => s + BigInt(o.high), 0n);
    } finally {
      await admin.disconnect();
    }
  };
  return {
    app,
    config,
    kafka,
    table,
    producer,
    adminKey,
    sql,
    lastUsed,
    phases,
    keyTopicEnd: () => topicEnd(topic),
    roundsTopicEnd: () => topicEnd(topicName(config, 'rounds')),
    async close() {
      await app.close();
      await phases.stop();
      await producer.disconnect();
      await table.close();
      await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`);
      await sql.end({ timeout: 5 });
      const admin = kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic, topicName(config, 'rounds')] }).catch(() => {});
      await admin.disconnect();
    },
  };
}
