/**
 * The wallet pipeline of issue 5 as child processes for bench/wallet.ts: round engine (one game,
 * fast), projector (rounds, wallet and auth-keys read models), API (request-access, play, bets),
 * settlement, wallet saga and the operator sandbox. Everything runs on loopback, on free ports, in
 * its own topic namespace, schemas (platform and sandbox ledger) and consumer groups; secrets are
 * generated per run so no file under .data/ is read or written. `stop()` removes what
 * `startWalletStack()` made.
 */
import { randomBytes } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { type Config, loadConfig } from '../lib/config.ts';
import { createSql, type Sql } from '../lib/db.ts';
import { gameBySlug } from '../lib/games.ts';
import { createKafka } from '../lib/kafka.ts';
import { createLogger } from '../lib/logger.ts';
import { migrate } from '../lib/migrate.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../lib/topics.ts';
import { newOperatorToken, newSigningSecret, sha256 } from '../services/api/access/secrets.ts';
import type { RetryPolicy } from '../services/wallet-saga/retry-policy.ts';
import { freePort, type Service, startService, uniqueId, waitFor } from '../tests/helpers/processes.ts';

export interface WalletStackOptions {
  /** The one game the round engine runs and the players bet on. */
  readonly game: string;
  /** ROUND_SPEED of the engine (20 = rounds twenty times shorter than live). */
  readonly speed: number;
  /** retry_policy of the operator row: short, so retried wins finish within the run. */
  readonly retryPolicy: RetryPolicy;
  /** timeout_ms of the operator row, ms. */
  readonly timeoutMs: number;
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
  readonly operatorId: string;
  /** Bearer of request-access for that operator. */
  readonly operatorToken: string;
  /** Consumer-group prefix of this run (the bench's own collectors use it too). */
  readonly ns: string;
  /** Replaces the sandbox's fault rules (PUT /_sandbox/faults). @throws when the sandbox refuses. */
  setFaults(rules: readonly Record<string, unknown>[]): Promise<void>;
  /** The last lines each service printed, labelled. */
  logs(): string;
  stop(): Promise<void>;
}

async function ok(url: string): Promise<true | undefined> {
  const res = await fetch(url);
  await res.body?.cancel();
  return res.ok ? true : undefined;
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
  const sandboxSchema = `${schema}_sbx`;
  const sandboxSecret = newSigningSecret();
  const [apiPort, sandboxPort, sagaPort, settlementPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env: Record<string, string> = {
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
    SETTLEMENT_GROUP: `${ns}settlement`,
    SETTLEMENT_HTTP_PORT: String(settlementPort),
    WALLET_SAGA_GROUP: `${ns}wallet-saga`,
    WALLET_REPLAY_GROUP: `${ns}wallet-replay`,
    WALLET_SAGA_HTTP_PORT: String(sagaPort),
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_PORT: String(sandboxPort),
    SANDBOX_DB_SCHEMA: sandboxSchema,
    SANDBOX_SIGNING_SECRET: sandboxSecret,
    // Players never run short: a refused bet would measure the balance, not the pipeline.
    SANDBOX_INITIAL_BALANCE: '1000000.00',
    BOTS_PLAYERS: '0',
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
  const operatorId = `opr_bench_${randomBytes(4).toString('hex')}`;
  const operatorToken = newOperatorToken();
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  await sql`
    insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
                           balance_path, rollback_path, signing_secret, timeout_ms, retry_policy)
    values (${operatorId}, 'bench sandbox', ${sha256(operatorToken)}, 'A', ${sandboxUrl}, '/wallet/bet',
            '/wallet/win', '/wallet/balance', '/wallet/rollback', ${sandboxSecret}, ${o.timeoutMs},
            ${sql.json({ ...o.retryPolicy })})`;

  const services: Record<string, Service> = {};
  const entries: Record<string, string> = {
    sandbox: 'services/operator-sandbox/main.ts',
    engine: 'services/round-engine/main.ts',
    projector: 'projections/main.ts',
    api: 'services/api/main.ts',
    settlement: 'services/settlement/main.ts',
    saga: 'services/wallet-saga/main.ts',
  };
  for (const [name, entry] of Object.entries(entries)) services[name] = startService(entry, env);
  const logs = () =>
    Object.entries(services)
      .map(([name, s]) => `----- ${name}\n${s.output().slice(-3000)}`)
      .join('\n');

  const stop = async () => {
    await Promise.all(Object.values(services).map((s) => s.stop('SIGTERM')));
    for (const s of [schema, sandboxSchema])
      await sql.unsafe(`drop schema if exists "${s}" cascade`).catch(() => {});
    await sql.end({ timeout: 5 });
    const topics = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
    await admin.deleteTopics({ topics }).catch(() => {});
    // Named groups of this run (the per-process auth-keys groups carry a random suffix under ns too).
    const listed = await admin.listGroups().catch(() => ({ groups: [] as { groupId: string }[] }));
    const mine = listed.groups.map((g) => g.groupId).filter((g) => g.startsWith(ns));
    if (mine.length > 0) await admin.deleteGroups(mine).catch(() => {});
    await admin.disconnect();
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
        const ready =
          (await ok(`${sandboxUrl}/ready`)) &&
          (await ok(`http://127.0.0.1:${apiPort}/ready`)) &&
          (await ok(`http://127.0.0.1:${sagaPort}/ready`)) &&
          (await ok(`http://127.0.0.1:${settlementPort}/ready`));
        return ready ? 'ready' : undefined;
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
    apiUrl: `http://127.0.0.1:${apiPort}`,
    sandboxUrl,
    sandboxSecret,
    operatorId,
    operatorToken,
    ns,
    async setFaults(rules) {
      const res = await fetch(`${sandboxUrl}/_sandbox/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rules),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`PUT /_sandbox/faults: HTTP ${res.status} ${text}`);
    },
    logs,
    stop,
  };
}
