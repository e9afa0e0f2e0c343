/**
 * A private Kafka broker and a private Postgres for fault drills (e2e tier), so a drill can kill or
 * restart them without touching the shared servers other test runs use. Each runs from
 * `scripts/kafka.sh` / `scripts/postgres.sh` with CASINO_DATA_DIR set to a fresh temporary folder
 * and free ports (those scripts' own switch for a second set of servers); `close()` stops the
 * server and removes the folder. Starting one takes about 8 s. `startPrivateKafkaCluster` starts a
 * cluster of three KRaft nodes the same way (KAFKA_CLUSTER_SIZE=3), for the broker-loss drills.
 *
 * The scripts treat KAFKA_BROKERS / DATABASE_URL as "an external server, start nothing", so the
 * child environment names this broker's own address and drops DATABASE_URL.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT } from './processes.ts';

const run = promisify(execFile);
/** Longest wait for a script's start or stop, ms (a broker recovering its log after SIGKILL is the slow case). */
const SCRIPT_TIMEOUT_MS = 150_000;

/** A server with a lifetime of its own; every method waits until the script is done. */
export interface PrivateServer {
  /** Starts it again after `stop()` or `kill()` (same data, same port). */
  start(): Promise<void>;
  /** Stops it gracefully (the script's own stop). */
  stop(): Promise<void>;
  /** Stops it and removes its data folder; safe to call more than once and after a failure. */
  close(): Promise<void>;
}

export interface PrivateKafka extends PrivateServer {
  /** `127.0.0.1:<port>`, for KAFKA_BROKERS. */
  readonly brokers: string;
  /** SIGKILLs the broker's JVM (by the pid its start script recorded): a crash, not a shutdown. */
  kill(): void;
}

export interface PrivatePostgres extends PrivateServer {
  /** `postgres://casino:casino@127.0.0.1:<port>/casino`, for DATABASE_URL. */
  readonly url: string;
}

async function script(name: string, cmd: string, env: NodeJS.ProcessEnv): Promise<void> {
  await scriptArgs(name, [cmd], env);
}

async function scriptArgs(name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run('bash', [join(ROOT, 'scripts', name), ...args], { cwd: ROOT, env, timeout: SCRIPT_TIMEOUT_MS });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
}

/** A fresh data folder that the `postgres` OS user can reach (the scripts run Postgres as it when root). */
function dataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** The start, stop and close of the server `name` (a script under scripts/) runs with `env` in `dir`. */
function scriptServer(name: string, dir: string, env: NodeJS.ProcessEnv): PrivateServer {
  let closed = false;
  return {
    start: () => script(name, 'start', env),
    stop: () => script(name, 'stop', env),
    async close() {
      if (closed) return;
      closed = true;
      await script(name, 'stop', env).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts `server`; when that fails, closes it (its folder removed) and rethrows. */
async function started<T extends PrivateServer>(server: T): Promise<T> {
  try {
    await server.start();
  } catch (err) {
    await server.close();
    throw err;
  }
  return server;
}

/**
 * Starts a single-node Kafka on free ports under a new temporary folder.
 * @throws when the broker does not start (the script's output is in the message).
 */
export async function startPrivateKafka(): Promise<PrivateKafka> {
  const dir = dataDir('drill-kafka-');
  const port = await freePort();
  let controller = await freePort();
  while (controller === port) controller = await freePort();
  const brokers = `127.0.0.1:${port}`;
  const env = {
    ...process.env,
    CASINO_DATA_DIR: dir,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controller),
    KAFKA_BROKERS: brokers,
  };
  return started({
    ...scriptServer('kafka.sh', dir, env),
    brokers,
    kill() {
      const pid = Number(readFileSync(join(dir, 'kafka', 'kafka.pid'), 'utf8').trim());
      if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no broker pid in ${dir}`);
      process.kill(pid, 'SIGKILL');
    },
  });
}

/**
 * Starts a Postgres cluster (role and database `casino`) on a free port under a new temporary folder.
 * @throws when it does not start (the script's output is in the message).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = dataDir('drill-pg-');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, CASINO_DATA_DIR: dir, PGPORT: String(port) };
  delete env.DATABASE_URL;
  return started({
    ...scriptServer('postgres.sh', dir, env),
    url: `postgres://casino:casino@127.0.0.1:${port}/casino`,
  });
}

export interface PrivateKafkaCluster extends PrivateServer {
  /** Every node's `127.0.0.1:<port>`, comma-separated, for KAFKA_BROKERS. */
  readonly brokers: string;
  /** Node count (node ids are 1..size, as Kafka's node.id). */
  readonly size: number;
  /** `127.0.0.1:<port>` of node `node`. */
  brokerOf(node: number): string;
  /** SIGKILLs node `node`'s JVM (by the pid its start script recorded): a crash, not a shutdown. */
  kill(node: number): void;
  /** Starts node `node` again (same data, same ports) and waits until the cluster lists every node. */
  startNode(node: number): Promise<void>;
  /** Stops node `node` gracefully (controlled shutdown: its partitions' leadership moves first). */
  stopNode(node: number): Promise<void>;
}

/** Whether `port` can be listened on at 127.0.0.1 now. */
function listenable(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

/**
 * Starts a cluster of `size` KRaft nodes (broker and controller each) from scripts/kafka.sh under a
 * new temporary folder: node N on KAFKA_PORT + 10·(N−1), its controller on KAFKA_PORT + 1 + 10·(N−1)
 * (the script's layout), with a base port whose every such port is free. `env` is added to the
 * script's environment (e.g. KAFKA_FAILOVER=kafka-defaults).
 * @throws when the cluster does not start (the script's output is in the message).
 */
export async function startPrivateKafkaCluster(
  size = 3,
  env: Readonly<Record<string, string>> = {},
): Promise<PrivateKafkaCluster> {
  const dir = dataDir('drill-kafka-cluster-');
  let base = 0;
  for (let i = 0; i < 50 && base === 0; i++) {
    const p = await freePort();
    const ports = Array.from({ length: size }, (_, n) => [p + 10 * n, p + 1 + 10 * n]).flat();
    if (p + 10 * size < 32_767 && (await Promise.all(ports.map(listenable))).every(Boolean)) base = p;
  }
  if (base === 0) throw new Error(`no free ports for a ${size}-node cluster`);
  const brokerOf = (node: number) => `127.0.0.1:${base + 10 * (node - 1)}`;
  const brokers = Array.from({ length: size }, (_, n) => brokerOf(n + 1)).join(',');
  const scriptEnv = {
    ...process.env,
    ...env,
    CASINO_DATA_DIR: dir,
    KAFKA_CLUSTER_SIZE: String(size),
    KAFKA_PORT: String(base),
    KAFKA_CONTROLLER_PORT: String(base + 1),
    KAFKA_BROKERS: brokers,
  };
  const checked = (node: number) => {
    if (!Number.isInteger(node) || node < 1 || node > size) throw new Error(`no node ${node} of ${size}`);
    return String(node);
  };
  return started({
    ...scriptServer('kafka.sh', dir, scriptEnv),
    brokers,
    size,
    brokerOf,
    kill(node) {
      const pid = Number(readFileSync(join(dir, `kafka-${checked(node)}`, 'kafka.pid'), 'utf8').trim());
      if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no pid of node ${node} in ${dir}`);
      process.kill(pid, 'SIGKILL');
    },
    startNode: (node) => scriptArgs('kafka.sh', ['start-node', checked(node)], scriptEnv),
    stopNode: (node) => scriptArgs('kafka.sh', ['stop-node', checked(node)], scriptEnv),
  });
}
