/**
 * The whole platform as child processes for the browser tests: API, projector, round engine,
 * edge (WebSocket, SSE, gRPC and its proxy), the Deno WebTransport edge, and the gateway that puts
 * pages, /api, /ws, /sse, /grpc-proxy and /webtransport/cert-hash on one origin, as `npm start`
 * does. With `wallet: true` also the operator sandbox, the settlement processor and the wallet
 * saga, with the sandbox registered as the operator (and, with `bots`, simulated players).
 * Everything runs in its own topic namespace, database schema, consumer groups, certificate
 * directory and free ports, and `stop()` removes what `startStack()` made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { type Config, loadConfig } from '../support/config.ts';
import { waitFor } from '../support/poll.ts';
import {
  devCertDir,
  freePort,
  type Service,
  startService,
  startWebTransportEdge,
  statusOf,
  uniqueId,
} from '../support/processes.ts';
import { registerWallet, type WalletStack, walletEnv, walletGroups } from './wallet-stack.ts';

export type { WalletStack } from './wallet-stack.ts';

export interface Stack {
  /** The gateway's origin, e.g. `http://127.0.0.1:41234`: every page and endpoint is under it. */
  readonly base: string;
  /** UDP port of the WebTransport edge (the pages take it as `?wt_port=`). */
  readonly wtPort: number;
  /** The edge's own HTTP port (its /ready, bypassing the gateway). */
  readonly edgeHttpPort: number;
  /** The edge's WebSocket and gRPC ports (clients that bypass the gateway, as the drills' are). */
  readonly edgeWsPort: number;
  readonly grpcPort: number;
  /** The stack's configuration (its topic namespace, schema and broker), as its services load it. */
  readonly config: Config;
  /** The environment every service of the stack gets (a second set of services starts from it). */
  readonly env: Readonly<Record<string, string>>;
  readonly services: Readonly<Record<string, Service>>;
  /** Output of every service, labelled, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
  /** Stops service `name` (SIGTERM, graceful); `startOne` starts it again with the same settings. */
  stopOne(name: string): Promise<void>;
  startOne(name: string): void;
  /** With `wallet: true`: the operator, the sandbox and the reconciliation. */
  readonly wallet?: WalletStack;
}

/** A stack started with `wallet: true`. */
export interface StackWithWallet extends Stack {
  readonly wallet: WalletStack;
}

const ok = async (url: string): Promise<boolean> => (await statusOf(url)) === 200;

export interface StackOptions {
  /** ROUND_SPEED of the round engine (default 20). */
  readonly roundSpeed?: number;
  /**
   * Settings added to every service's environment and to the stack's own config (e.g. the
   * KAFKA_BROKERS and DATABASE_URL of a private broker and database for a fault drill).
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Also start services/operator-sandbox, services/settlement and services/wallet-saga, and
   * register the sandbox as the operator (services `sandbox`, `settlement`, `saga`).
   */
  readonly wallet?: boolean;
  /** With `wallet`: services/bots (service `bots`) with this many players and mean pause, ms (1000). */
  readonly bots?: { readonly players: number; readonly betIntervalMs?: number };
}

/**
 * Starts the stack and waits until every game has a round in the read model, the edges are
 * ready, and the gateway serves the certificate hash.
 * @throws when a service exits or is not ready within two minutes (with every service's output).
 */
export async function startStack(options: StackOptions & { wallet: true }): Promise<StackWithWallet>;
export async function startStack(options?: StackOptions): Promise<Stack>;
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  if (options.bots && !options.wallet) throw new Error('startStack: bots need wallet: true');
  const roundSpeed = options.roundSpeed ?? 20;
  const extra = options.env ?? {};
  const ns = `${uniqueId('e2e-browser-')}-`;
  const schema = uniqueId('e2e_browser_');
  const config = loadConfig({ ...process.env, ...extra }, { TOPIC_NAMESPACE: ns, DATABASE_SCHEMA: schema });
  const kafka = createKafka(config, 'browser-e2e', createLogger('test', 'warn'));
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  await admin.disconnect();

  const certDir = devCertDir('browser-e2e-cert-');
  const taken = new Set<number>();
  const port = async (): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const [api, engine, edgeHttp, edgeWs, grpc, wt, wtHttp, gateway] = [
    await port(),
    await port(),
    await port(),
    await port(),
    await port(),
    await port(),
    await port(),
    await port(),
  ];
  const walletDir = options.wallet ? mkdtempSync(join(tmpdir(), 'browser-e2e-wallet-')) : undefined;
  const wallet = walletDir
    ? walletEnv(
        ns,
        schema,
        { sandbox: await port(), saga: await port(), settlement: await port() },
        walletDir,
      )
    : undefined;
  const env: Record<string, string> = {
    ...wallet?.defaults,
    ...(options.bots
      ? {
          BOTS_PLAYERS: String(options.bots.players),
          BOTS_BET_INTERVAL_MS: String(options.bots.betIntervalMs ?? 1000),
        }
      : {}),
    ...extra,
    ...wallet?.fixed,
    // game_url of request-access must open on this stack's gateway.
    PUBLIC_BASE_URL: `http://127.0.0.1:${gateway}`,
    TOPIC_NAMESPACE: ns,
    DATABASE_SCHEMA: schema,
    PROJECTOR_GROUP: `${ns}projector`,
    API_PORT: String(api),
    // The API asks the engine for crash cash-outs.
    ROUND_ENGINE_PORT: String(engine),
    API_ENGINE_URL: `http://127.0.0.1:${engine}`,
    PROJECTOR_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    BOTS_HTTP_PORT: '0',
    ROUND_SPEED: String(roundSpeed),
    ROUND_CHAIN_LENGTH: '1000',
    ROUND_SERVER_SEED: 'be'.repeat(32),
    // Every page of the suite polls or loads history from 127.0.0.1: the seed's 100/min is per IP.
    RATE_LIMIT_MAX: '100000',
    EDGE_HTTP_PORT: String(edgeHttp),
    EDGE_WS_PORT: String(edgeWs),
    GRPC_PORT: String(grpc),
    WT_PORT: String(wt),
    WT_HTTP_PORT: String(wtHttp),
    WT_DEV_CERT_DIR: certDir,
    GATEWAY_PORT: String(gateway),
    EDGE_DRAIN_MS: '300',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  const starters: Record<string, () => Service> = {
    api: () => startService('services/api/main.ts', env),
    projector: () => startService('services/projector/main.ts', env),
    engine: () => startService('services/round-engine/main.ts', env),
    edge: () => startService('services/edge/main.ts', env),
    wt: () => startWebTransportEdge(env),
    gateway: () => startService('services/gateway/main.ts', env),
    ...(wallet
      ? {
          sandbox: () => startService('services/operator-sandbox/main.ts', env),
          settlement: () => startService('services/settlement/main.ts', env),
          saga: () => startService('services/wallet-saga/main.ts', env),
        }
      : {}),
  };
  const services: Record<string, Service> = {};
  for (const [name, start] of Object.entries(starters)) services[name] = start();
  // Bots need the operator file, written once the stack is up; started last.
  if (options.bots) starters.bots = () => startService('services/bots/main.ts', env);
  let walletHandle: WalletStack | undefined;
  const logs = () =>
    Object.entries(services)
      .map(([name, s]) => `----- ${name}\n${s.output().slice(-4000)}`)
      .join('\n');
  const base = `http://127.0.0.1:${gateway}`;

  const stop = async () => {
    await Promise.all(Object.values(services).map((s) => s.stop('SIGTERM')));
    await walletHandle?.sql.end({ timeout: 5 });
    const sql = createSql(config, { max: 1 });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
    if (wallet)
      await sql.unsafe(`drop schema if exists "${wallet.fixed.SANDBOX_DB_SCHEMA}" cascade`).catch(() => {});
    await sql.end();
    await admin.connect();
    const topics = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
    await admin.deleteTopics({ topics }).catch(() => {});
    if (wallet) await admin.deleteGroups(walletGroups(env)).catch(() => {});
    await admin.disconnect();
    rmSync(certDir, { recursive: true, force: true });
    if (walletDir) rmSync(walletDir, { recursive: true, force: true });
  };

  // waitFor retries on errors, so a service that died is reported as a value and thrown after.
  const dead = () => Object.entries(services).find(([, s]) => s.child.exitCode !== null)?.[0];
  try {
    const result = await waitFor(
      'a round of every game through the gateway, both edges ready, and the certificate hash',
      async () => {
        const gone = dead();
        if (gone) return `${gone} exited with ${services[gone]?.child.exitCode}`;
        const games = (await (await fetch(`${base}/api/games`)).json()) as { last_round: number | null }[];
        if (games.length !== 4 || games.some((g) => g.last_round === null)) return undefined;
        const ready =
          (await ok(`http://127.0.0.1:${edgeHttp}/ready`)) &&
          (await ok(`http://127.0.0.1:${wtHttp}/ready`)) &&
          (await ok(`${base}/webtransport/cert-hash`)) &&
          (!wallet ||
            ((await ok(`http://127.0.0.1:${wallet.fixed.SANDBOX_PORT}/ready`)) &&
              (await ok(`http://127.0.0.1:${wallet.fixed.WALLET_SAGA_HTTP_PORT}/ready`)) &&
              (await ok(`http://127.0.0.1:${wallet.fixed.SETTLEMENT_HTTP_PORT}/ready`))));
        return ready ? 'ready' : undefined;
      },
      120_000,
      500,
    );
    if (result !== 'ready') throw new Error(result);
    if (wallet) walletHandle = await registerWallet(env);
    if (starters.bots) services.bots = starters.bots();
  } catch (err) {
    const text = `${(err as Error).message}\n${logs()}`;
    await stop();
    throw new Error(text);
  }
  const starter = (name: string) => {
    const start = starters[name];
    if (!start) throw new Error(`no service ${name}`);
    return start;
  };
  const stopOne = async (name: string) => {
    starter(name);
    await services[name]?.stop('SIGTERM');
  };
  const startOne = (name: string) => {
    services[name] = starter(name)();
  };
  return {
    base,
    wtPort: wt,
    edgeHttpPort: edgeHttp,
    edgeWsPort: edgeWs,
    grpcPort: grpc,
    config,
    env,
    services,
    logs,
    stop,
    stopOne,
    startOne,
    ...(walletHandle ? { wallet: walletHandle } : {}),
  };
}
