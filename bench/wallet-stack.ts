/**
 * The wallet pipeline as child processes for bench/wallet.ts: round engine (one game,
 * fast), projector (rounds, wallet and auth-keys read models), API (request-access, play, bets),
 * settlement and wallet saga (`instances` of each: settlement processes sharing their consumer
 * group, saga processes sharing theirs and the callback table, each with its own ops port and
 * WALLET_SAGA_INSTANCE) and the operator sandbox — the wallet part of the browser test stack
 * without its edges and gateway, which would share the CPU with what is measured. Everything runs
 * on loopback, on free ports, in its own topic namespace (TOPIC_PARTITIONS partitions, so two
 * instances have partitions to share), schemas (platform and sandbox ledger) and consumer groups
 * (the wallet services' settings: tests/browser/wallet-stack.ts walletEnv); the sandbox is
 * registered as the operator as `npm start` does (registerSandboxOperator), with secrets
 * generated per run and the operator file in a temporary folder, so no file under .data/ is read
 * or written. `stop()` removes what `startWalletStack()` made.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import { migrate } from '../lib/db/migrate.ts';
import { createSql, type Sql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { gameBySlug } from '../rules/games/catalog.ts';
import type { RetryPolicy } from '../rules/retry/schedule.ts';
import { registerSandboxOperator } from '../services/operator-sandbox/register.ts';
import { walletEnv } from '../tests/browser/wallet-stack.ts';
import { type Config, loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startService, statusOf, uniqueId } from '../tests/support/processes.ts';

export interface WalletStackOptions {
  /** The one game the round engine runs and the players bet on. */
  readonly game: string;
  /** ROUND_SPEED of the engine (20 = rounds twenty times shorter than live). */
  readonly speed: number;
  /** retry_policy of the operator row: short, so retried wins finish within the run. */
  readonly retryPolicy: RetryPolicy;
  /** timeout_ms of the operator row, ms. */
  readonly timeoutMs: number;
  /** round_close of the operator row: lost bets closed with a zero-amount win, or not at all. */
  readonly roundClose: 'zero-win' | 'none';
  /** Settlement processes, and saga processes (the same number of each). */
  readonly instances: number;
  /** Partitions of every topic (TOPIC_PARTITIONS). */
  readonly partitions: number;
  /** Postgres connections of the operator sandbox (its DATABASE_POOL_MAX). */
  readonly sandboxPool: number;
}

export interface WalletStack {
  readonly config: Config;
  readonly kafka: Kafka;
  /** Pool on the platform schema. */
  readonly sql: Sql;
  readonly apiUrl: string;
  readonly sandboxUrl: string;
  /** The sandbox's Standard Webhooks secret (`whsec_…`), also the operator row's signing secret. */
  readonly sandboxSecret: string;
  /** Bearer of request-access for the sandbox operator. */
  readonly operatorToken: string;
  /** Consumer-group prefix of this run (the bench's own collectors use it too). */
  readonly ns: string;
  /** Schema of the sandbox's ledger (its `transactions` rows carry the time each was booked). */
  readonly sandboxSchema: string;
  /** `/metrics` of each settlement and each saga process. */
  readonly metricsUrls: { readonly settlement: string[]; readonly saga: string[] };
  /** The last lines each service printed, labelled. */
  logs(): string;
  /** Each service's name (`saga-2`) and process id. */
  pids(): [string, number][];
  stop(): Promise<void>;
}

/**
 * Starts the pipeline and waits until every service is ready and the game has a finished round
 * in the read model (bets need a `last_round`).
 * @throws when a service exits or is not ready within two minutes (with every service's output);
 *   whatever was started is stopped and removed first.
 */
export async function startWalletStack(o: WalletStackOptions): Promise<WalletStack> {
  const game = gameBySlug(o.game);
  if (!game) throw new Error(`unknown game '${o.game}'`);
  const ns = `${uniqueId('bench-wallet-')}-`;
  const schema = uniqueId('bench_wallet_');
  const [apiPort, sandboxPort] = [await freePort(), await freePort()];
  const sagaPorts: number[] = [];
  const settlementPorts: number[] = [];
  for (let i = 0; i < o.instances; i++) {
    sagaPorts.push(await freePort());
    settlementPorts.push(await freePort());
  }
  const [sagaPort, settlementPort] = [sagaPorts[0] as number, settlementPorts[0] as number];
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const tmp = mkdtempSync(join(tmpdir(), 'bench-wallet-'));
  const env: Record<string, string> = {
    ...walletEnv(ns, schema, { sandbox: sandboxPort, saga: sagaPort, settlement: settlementPort }, tmp).fixed,
    TOPIC_NAMESPACE: ns,
    DATABASE_SCHEMA: schema,
    API_HOST: '127.0.0.1',
    API_PORT: String(apiPort),
    PROJECTOR_GROUP: `${ns}projector`,
    PROJECTOR_PORT: '0',
    ROUND_ENGINE_PORT: '0',
    ROUND_SPEED: String(o.speed),
    ROUND_GAMES: game.slug,
    ROUND_CHAIN_LENGTH: '1000',
    ROUND_SERVER_SEED: randomBytes(32).toString('hex'),
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    RATE_LIMIT_MAX: '10000000',
    // game_url of request-access on the API, where the bench opens it.
    PUBLIC_BASE_URL: apiUrl,
    // Players never run short: a refused bet would measure the balance, not the pipeline.
    SANDBOX_INITIAL_BALANCE: '1000000.00',
    BOTS_PLAYERS: '0',
    TOPIC_PARTITIONS: String(o.partitions),
    LOG_LEVEL: 'warn',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  const config = loadConfig(process.env, env);
  const kafka = createKafka(config, 'bench-wallet', createLogger('bench', 'warn'));
  const sql = createSql(config, { max: 4 });
  const admin: Admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  await migrate(sql, schema);
  const operator = await registerSandboxOperator(sql, config, undefined, {
    timeoutMs: o.timeoutMs,
    retryPolicy: o.retryPolicy,
  });
  await sql`update operators set round_close = ${o.roundClose} where operator_id = ${operator.operator_id}`;

  const services: Record<string, Service> = {};
  const entries: Record<string, string> = {
    sandbox: 'services/operator-sandbox/main.ts',
    engine: 'services/round-engine/main.ts',
    projector: 'services/projector/main.ts',
    api: 'services/api/main.ts',
  };
  for (const [name, entry] of Object.entries(entries))
    services[name] = startService(
      entry,
      // The operator's wallet sized for the load it is given: a pool of `sandboxPool` connections
      // (the shared default of 10 made the sandbox's pool the queue at every round end).
      name === 'sandbox' ? { ...env, DATABASE_POOL_MAX: String(o.sandboxPool) } : env,
    );
  for (let i = 0; i < o.instances; i++) {
    services[`settlement-${i + 1}`] = startService('services/settlement/main.ts', {
      ...env,
      SETTLEMENT_HTTP_PORT: String(settlementPorts[i]),
    });
    services[`saga-${i + 1}`] = startService('services/wallet-saga/main.ts', {
      ...env,
      WALLET_SAGA_HTTP_PORT: String(sagaPorts[i]),
      WALLET_SAGA_INSTANCE: `${ns}saga-${i + 1}`,
    });
  }
  const logs = () =>
    Object.entries(services)
      .map(([name, s]) => `----- ${name}\n${s.output().slice(-3000)}`)
      .join('\n');

  const stop = async () => {
    await Promise.all(Object.values(services).map((s) => s.stop('SIGTERM')));
    for (const s of [schema, config.sandbox.dbSchema])
      await sql.unsafe(`drop schema if exists "${s}" cascade`).catch(() => {});
    await sql.end({ timeout: 5 });
    const topics = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
    await admin.deleteTopics({ topics }).catch(() => {});
    // Named groups of this run (the per-process auth-keys groups carry a random suffix under ns too).
    const listed = await admin.listGroups().catch(() => ({ groups: [] as { groupId: string }[] }));
    const mine = listed.groups.map((g) => g.groupId).filter((g) => g.startsWith(ns));
    if (mine.length > 0) await admin.deleteGroups(mine).catch(() => {});
    await admin.disconnect();
    rmSync(tmp, { recursive: true, force: true });
  };

  const dead = () => Object.entries(services).find(([, s]) => s.child.exitCode !== null)?.[0];
  try {
    const result = await waitFor(
      `every service ready and a ${game.slug} round in the read model`,
      async () => {
        const gone = dead();
        if (gone) return `${gone} exited with ${services[gone]?.child.exitCode}`;
        const [g] = await sql<{ last_round: string | null }[]>`
          select last_round from games where id = ${game.id}`;
        if (g?.last_round == null) return undefined;
        for (const port of [sandboxPort, apiPort, ...sagaPorts, ...settlementPorts])
          if ((await statusOf(`http://127.0.0.1:${port}/ready`)) !== 200) return undefined;
        return 'ready';
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
    sql,
    apiUrl,
    sandboxUrl: operator.base_url,
    sandboxSecret: config.sandbox.signingSecret,
    operatorToken: operator.api_token,
    ns,
    sandboxSchema: config.sandbox.dbSchema,
    metricsUrls: {
      settlement: settlementPorts.map((p) => `http://127.0.0.1:${p}/metrics`),
      saga: sagaPorts.map((p) => `http://127.0.0.1:${p}/metrics`),
    },
    logs,
    pids: () => Object.entries(services).map(([name, s]) => [name, s.child.pid as number]),
    stop,
  };
}
