/**
 * Test support for the projector's integration tests: valid RoundFinished events of every game,
 * a per-test environment (own topics, schema and consumer group, all removed afterwards), and a
 * TCP proxy in front of Postgres that a test closes and reopens to simulate an outage.
 */
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Kafka, Message, Producer } from 'kafkajs';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { GAMES } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { sampleRound } from '../../rules/rounds/samples.ts';
import { type Config, loadConfig } from './config.ts';
import { type Service, startService } from './processes.ts';

export { sampleRound };

/** `perGame` rounds of each of the four games (seq 1..perGame, finished 1 s apart from `t0`), interleaved. */
export function sampleRounds(perGame: number, t0 = Date.UTC(2026, 0, 1)): RoundFinished[] {
  const out: RoundFinished[] = [];
  for (let seq = 1; seq <= perGame; seq++)
    for (const g of GAMES) out.push(sampleRound(g.slug, seq, t0 + seq * 1000 + g.id));
  return out;
}

/** The record of `round` on the rounds topic (key = game slug, docs/contract.md "Topics"). */
export const roundMessage = (round: RoundFinished): Message => ({
  key: round.game_slug,
  value: encodeRound(round),
});

/** Appends `messages` in sends of 2000. */
export async function produceAll(
  producer: Producer,
  topic: string,
  messages: readonly Message[],
): Promise<void> {
  for (let i = 0; i < messages.length; i += 2000)
    await producer.send({ topic, messages: messages.slice(i, i + 2000) });
}

/** An isolated environment for one test file. */
export interface TestEnv {
  readonly config: Config;
  /** Settings to give a child process the same environment. */
  readonly env: Record<string, string>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly topic: string;
  readonly dlqTopic: string;
  /** Drops the schema, deletes the namespace's topics, disconnects. */
  close(): Promise<void>;
}

/** Creates topics and the migrated schema of a fresh namespace. `overrides` go to loadConfig. */
export async function createTestEnv(name: string, overrides: Record<string, string> = {}): Promise<TestEnv> {
  const id = randomBytes(4).toString('hex');
  const env = {
    TOPIC_NAMESPACE: `t-${name}-${id}-`,
    DATABASE_SCHEMA: `t_${name}_${id}`,
    PROJECTOR_GROUP: `t-${name}-${id}-projector`,
    ...overrides,
  };
  const config = loadConfig(process.env, env);
  const kafka = createKafka(config, `test-${name}`, createLogger('test', 'error'));
  const sql = createSql(config, { max: 4 });
  await migrate(sql, config.db.schema);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'roundsDeadLetter']);
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const topics = [topicName(config, 'rounds'), topicName(config, 'roundsDeadLetter')];
  return {
    config,
    env,
    kafka,
    sql,
    producer,
    topic: topics[0] as string,
    dlqTopic: topics[1] as string,
    async close() {
      await producer.disconnect();
      await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`);
      await sql.end();
      const a = kafka.admin();
      await a.connect();
      // Every project topic of this namespace that exists (a test or services/projector/main.ts may have
      // made more than rounds and its dead letters); deleting a missing one retries for seconds.
      const ours = new Set((Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k)));
      const existing = (await a.listTopics()).filter((t) => ours.has(t));
      if (existing.length > 0) await a.deleteTopics({ topics: existing }).catch(() => {});
      await a.disconnect();
    },
  };
}

/** The projector process (`tsx services/projector/main.ts`) on `e`'s namespace, ops port any free one, warnings only. */
export function startProjectorProcess(e: Pick<TestEnv, 'env'>): Service {
  return startService('services/projector/main.ts', {
    ...e.env,
    PROJECTOR_PORT: '0',
    LOG_LEVEL: 'warn',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  });
}

/** A TCP proxy on 127.0.0.1 to `target`; `close()` cuts every connection and refuses new ones until `open()`. */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** Starts listening (on the same port as before after a `close()`). */
  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and destroys every open connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
