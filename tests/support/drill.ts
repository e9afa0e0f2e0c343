/**
 * Shared parts of the graceful-shutdown test and the fault drills (e2e tier): an isolated
 * namespace (topics, schema, groups) on a given broker and database, the services of the platform
 * as child processes with free ports, and reading the rounds topic back as the reference the
 * drills compare subscribers and read models with. `close()` stops every process it started and
 * removes the topics and the schema, also after a failure.
 */
import type { Kafka } from 'kafkajs';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka, partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { type Config, loadConfig } from './config.ts';
import { waitFor } from './poll.ts';
import { freePort, type Service, startService, statusOf, uniqueId } from './processes.ts';

export interface DrillEnv {
  readonly config: Config;
  /** Settings for every child process: namespace, schema, groups, broker and database. */
  readonly env: Record<string, string>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  /** Starts `entry` with `env` plus `extra`, remembered so `close()` stops it. */
  start(entry: string, extra?: Record<string, string>): Service;
  /** Starts an edge on free ports and waits until its /ready answers 200. */
  startEdge(extra?: Record<string, string>): Promise<EdgeProcess>;
  /** Output of every process started, labelled, for failure messages. */
  logs(): string;
  /** SIGKILLs what is still running, deletes the topics, drops the schema. */
  close(): Promise<void>;
}

export interface EdgeProcess {
  readonly svc: Service;
  readonly httpPort: number;
  readonly wsPort: number;
  /** Starts the same edge again (same ports) and waits until it is ready. */
  restart(): Promise<EdgeProcess>;
}

/**
 * Creates an isolated namespace. `base` holds KAFKA_BROKERS / DATABASE_URL of a private server when
 * the drill has one (the shared ones otherwise); with `privateBroker`, `close()` leaves the topics
 * to the broker's removal (it may be down when the drill fails).
 */
export async function createDrillEnv(
  name: string,
  base: Record<string, string> = {},
  options: { privateBroker?: boolean } = {},
): Promise<DrillEnv> {
  const ns = `${uniqueId(`drill-${name}-`)}-`;
  const schema = uniqueId(`drill_${name.replace(/-/g, '_')}_`);
  const env: Record<string, string> = {
    ...base,
    TOPIC_NAMESPACE: ns,
    DATABASE_SCHEMA: schema,
    PROJECTOR_GROUP: `${ns}projector`,
    SETTLEMENT_GROUP: `${ns}settlement`,
    WALLET_SAGA_GROUP: `${ns}wallet-saga`,
    // Every listener a test does not reach on a known port binds any free port (0), so nothing
    // collides with `npm start` or another run.
    ROUND_ENGINE_PORT: '0',
    PROJECTOR_PORT: '0',
    SETTLEMENT_HTTP_PORT: '0',
    WALLET_SAGA_HTTP_PORT: '0',
    BOTS_HTTP_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    SANDBOX_PORT: '0',
    WT_PORT: '0',
    WT_HTTP_PORT: '0',
    ROUND_CHAIN_LENGTH: '1000',
    ROUND_SERVER_SEED: 'd1'.repeat(32),
    RATE_LIMIT_MAX: '1000000',
    GRPC_PORT: '0',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  const config = loadConfig({ ...process.env, ...env });
  const kafka = createKafka(config, `drill-${name}`, createLogger('drill', 'silent'));
  const sql = createSql(config, { max: 3 });
  await migrate(sql, config.db.schema);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  await admin.disconnect();
  const started: { label: string; svc: Service }[] = [];
  const start = (entry: string, extra: Record<string, string> = {}) => {
    const svc = startService(entry, { ...env, ...extra });
    started.push({ label: entry, svc });
    return svc;
  };
  const edgeAt = async (httpPort: number, wsPort: number, extra: Record<string, string>) => {
    const svc = start('services/edge/main.ts', {
      EDGE_HTTP_PORT: String(httpPort),
      EDGE_WS_PORT: String(wsPort),
      ...extra,
    });
    await waitFor(
      `edge on ${httpPort} ready`,
      async () => {
        if (svc.child.exitCode !== null) throw new Error(`edge exited: ${svc.output().slice(-2000)}`);
        return (await statusOf(`http://127.0.0.1:${httpPort}/ready`)) === 200 ? true : undefined;
      },
      90_000,
      200,
    );
    const edge: EdgeProcess = { svc, httpPort, wsPort, restart: () => edgeAt(httpPort, wsPort, extra) };
    return edge;
  };
  return {
    config,
    env,
    kafka,
    sql,
    start,
    startEdge: async (extra = {}) => edgeAt(await freePort(), await freePort(), extra),
    logs: () => started.map((s) => `----- ${s.label}\n${s.svc.output().slice(-3000)}`).join('\n'),
    async close() {
      await Promise.all(started.map((s) => s.svc.stop('SIGKILL')));
      await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
      await sql.end({ timeout: 2 }).catch(() => {});
      if (options.privateBroker) return; // removed with the broker's folder
      const a = kafka.admin();
      await a.connect().catch(() => {});
      const topics = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
      await a.deleteTopics({ topics, timeout: 10_000 }).catch(() => {});
      await a.disconnect().catch(() => {});
    },
  };
}

/**
 * Every round id of the rounds topic per game, in log order (one game is one partition). The
 * lifecycle events and cash-outs the topic also carries are left out.
 */
export async function roundsInLog(kafka: Kafka, topic: string): Promise<Map<string, number[]>> {
  const offsets = await partitionOffsets(kafka, topic);
  const byGame = new Map<string, number[]>();
  await readRange(kafka, topic, new Map([...offsets].map(([p, o]) => [p, o.low])), (r) => {
    const round = decodeRoundEvent(r.message.value);
    if (round.type !== 'RoundFinished') return;
    const list = byGame.get(round.game_slug) ?? [];
    list.push(round.round_id);
    byGame.set(round.game_slug, list);
  });
  return byGame;
}

/** Resolves once the rounds topic holds at least `min` rounds of every game (a running engine's first rounds). */
export async function awaitRoundsOfEveryGame(kafka: Kafka, topic: string, min = 2): Promise<void> {
  await waitFor(
    `${min} rounds of every game in the log`,
    async () => {
      const log = await roundsInLog(kafka, topic);
      return log.size === 4 && [...log.values()].every((l) => l.length >= min) ? true : undefined;
    },
    60_000,
    500,
  );
}

/** Records of `topic` (sum of high − low over its partitions). */
export async function recordCount(kafka: Kafka, topic: string): Promise<number> {
  const offsets = await partitionOffsets(kafka, topic);
  return [...offsets.values()].reduce((n, o) => n + Number(o.high - o.low), 0);
}

/** Problems of a game's round ids in the log: not consecutive from 1, or repeated. */
export function logGaps(log: ReadonlyMap<string, readonly number[]>): string[] {
  const out: string[] = [];
  for (const [g, ids] of log) {
    const seqs = ids.map((r) => r % 1e12);
    const bad = seqs.findIndex((s, i) => s !== i + 1);
    if (bad >= 0) out.push(`${g}: sequence ${seqs[bad]} at position ${bad + 1}`);
  }
  return out;
}

/** Per game, the rows of the `rounds` read model: count, distinct round ids, and the span of its ids. */
export async function roundsPerGame(
  sql: Sql,
): Promise<{ slug: string; n: number; d: number; span: number }[]> {
  return await sql<{ slug: string; n: number; d: number; span: number }[]>`
    select game_slug as slug, count(*)::int as n, count(distinct round_id)::int as d,
           (max(round_id) - min(round_id) + 1)::int as span
    from rounds group by game_slug order by game_slug`;
}
