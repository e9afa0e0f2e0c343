/**
 * The processes of one part of bench/lifecycle.ts, as real child processes on loopback in a topic
 * namespace of their own: the round engine running crash only (ROUND_GAMES=crash) at a given
 * ROUND_SPEED and betting window, and either the API (its own database schema, API_ENGINE_URL at
 * the engine's port, an admin key made for the run) or the Node edge (bench/edge-harness.ts). The
 * token secret is made per run, so no file under .data/ is read or written. The benchmark's reader
 * of `rounds` (lifecycle-log.ts) starts with the stack; `stop()` removes the topics, consumer
 * groups and schema the run made.
 */
import { randomBytes } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { createSql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { type Config, loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startService, statusOf, uniqueId } from '../tests/support/processes.ts';
import { type EdgeProcess, startNodeEdge } from './edge-harness.ts';
import { followRounds, type RoundsFollower } from './lifecycle-log.ts';

export interface LifecycleStackOptions {
  /** Names the namespace (`bench-lifecycle-<part>-…`). */
  readonly part: string;
  /** ROUND_SPEED of the engine. */
  readonly speed: number;
  /** Crash's betting window at speed 1, ms (ROUND_BETTING_MS). */
  readonly bettingMs: number;
  /** Which service runs beside the engine. */
  readonly with: 'api' | 'edge';
}

export interface LifecycleStack {
  readonly config: Config;
  readonly kafka: Kafka;
  readonly rounds: RoundsFollower;
  readonly engineUrl: string;
  /** The API's origin (with `api`). */
  readonly apiUrl: string;
  /** Admin key of the API (with `api`). */
  readonly adminKey: string;
  /** The edge (with `edge`). */
  readonly edge: EdgeProcess | undefined;
  /** Each service's name and process id. */
  pids(): Record<string, number>;
  /** The last lines each service printed, labelled. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts the engine and the other service, and waits until both are ready and crash has opened a
 * round on the log.
 * @throws when a service exits or is not ready within two minutes (with their output); whatever
 *   was started is stopped and removed first.
 */
export async function startLifecycleStack(o: LifecycleStackOptions): Promise<LifecycleStack> {
  const ns = `${uniqueId(`bench-lifecycle-${o.part}-`)}-`;
  const schema = uniqueId('bench_lifecycle_');
  const [enginePort, apiPort] = [await freePort(), await freePort()];
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const adminKey = `sk_live_${randomBytes(32).toString('hex')}`;
  const env: Record<string, string> = {
    TOPIC_NAMESPACE: ns,
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  const engineEnv = {
    ...env,
    API_HOST: '127.0.0.1',
    ROUND_ENGINE_PORT: String(enginePort),
    ROUND_GAMES: 'crash',
    ROUND_SPEED: String(o.speed),
    ROUND_BETTING_MS: `crash=${o.bettingMs}`,
    ROUND_SERVER_SEED: randomBytes(32).toString('hex'),
    ROUND_CHAIN_LENGTH: '10000',
  };
  const apiEnv = {
    ...env,
    DATABASE_SCHEMA: schema,
    API_HOST: '127.0.0.1',
    API_PORT: String(apiPort),
    API_ENGINE_URL: engineUrl,
    API_FREE_BET_GROUP: `${ns}api-free-bets`,
    AUTH_ADMIN_KEY: adminKey,
    RATE_LIMIT_MAX: '10000000',
    PUBLIC_BASE_URL: apiUrl,
  };
  const config = loadConfig(process.env, o.with === 'api' ? apiEnv : env);
  const kafka = createKafka(config, 'bench-lifecycle', createLogger('bench', 'warn'));
  const admin: Admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  const rounds = await followRounds(kafka, topicName(config, 'rounds'), `${ns}bench`);
  const services: Record<string, Service> = {
    engine: startService('services/round-engine/main.ts', engineEnv),
  };
  if (o.with === 'api') services.api = startService('services/api/main.ts', apiEnv);
  let edge: EdgeProcess | undefined;
  const logs = () =>
    Object.entries({ ...services, ...(edge ? { edge: edge.service } : {}) })
      .map(([name, s]) => `----- ${name}\n${s.output().slice(-3000)}`)
      .join('\n');

  const stop = async () => {
    await rounds.stop().catch(() => {});
    await Promise.all([...Object.values(services).map((s) => s.stop('SIGTERM')), edge?.stop()]);
    if (o.with === 'api') {
      const sql = createSql(config, { max: 1 });
      await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
      await sql.end({ timeout: 5 });
    }
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(ns));
    await admin.deleteTopics({ topics }).catch(() => {});
    const listed = await admin.listGroups().catch(() => ({ groups: [] as { groupId: string }[] }));
    const mine = listed.groups.map((g) => g.groupId).filter((g) => g.startsWith(ns));
    if (mine.length > 0) await admin.deleteGroups(mine).catch(() => {});
    await admin.disconnect();
  };

  try {
    if (o.with === 'edge')
      edge = await startNodeEdge({ ns }, { env: { AUTH_TOKEN_SECRET: env.AUTH_TOKEN_SECRET as string } });
    const ready = [`${engineUrl}/ready`, ...(o.with === 'api' ? [`${apiUrl}/ready`] : [])];
    const result = await waitFor(
      'the services ready and a crash round opened',
      async () => {
        const gone = Object.entries(services).find(([, s]) => s.child.exitCode !== null);
        if (gone) return `${gone[0]} exited with ${gone[1].child.exitCode}`;
        for (const url of ready) if ((await statusOf(url)) !== 200) return undefined;
        return rounds.phase() ? 'ready' : undefined;
      },
      120_000,
      250,
    );
    if (result !== 'ready') throw new Error(result);
  } catch (err) {
    const text = `${(err as Error).message}\n${logs()}`;
    await stop();
    throw new Error(text);
  }

  return {
    config,
    kafka,
    rounds,
    engineUrl,
    apiUrl,
    adminKey,
    edge,
    pids: () =>
      Object.fromEntries([
        ...Object.entries(services).map(([name, s]) => [name, s.child.pid as number] as const),
        ...(edge ? [['edge', edge.pid] as const] : []),
      ]),
    logs,
    stop,
  };
}
