/**
 * A private Kafka broker and a private Postgres for fault drills (e2e tier), so a drill can kill or
 * restart them without touching the shared servers other test runs use. Each runs from
 * `scripts/kafka.sh` / `scripts/postgres.sh` with CASINO_DATA_DIR set to a fresh temporary folder
 * and free ports (those scripts' own switch for a second set of servers); `close()` stops the
 * server and removes the folder. Starting one takes about 8 s.
 *
 * The scripts treat KAFKA_BROKERS / DATABASE_URL as "an external server, start nothing", so the
 * child environment names this broker's own address and drops DATABASE_URL.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  try {
    await run('bash', [join(ROOT, 'scripts', name), cmd], { cwd: ROOT, env, timeout: SCRIPT_TIMEOUT_MS });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${name} ${cmd} failed: ${e.message}\n${e.stderr ?? ''}`);
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
