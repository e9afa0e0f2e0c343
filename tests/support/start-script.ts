/**
 * `npm start` (scripts/start.sh, every service) as a terminal's job for e2e tests: each stack runs
 * on free ports in its own topic namespace, schema, consumer groups and temporary folder, on the
 * Kafka and Postgres of KAFKA_BROKERS / DATABASE_URL (external to the script, so it leaves them
 * running). `ctrlC` stops it as a terminal's Ctrl-C does; `removeStacks` removes what each stack made.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadConfig } from './config.ts';
import { waitFor } from './poll.ts';
import { freePort, ROOT, waitReady } from './processes.ts';

/** One `npm start` (scripts/start.sh) on free ports in its own namespace, as a terminal's job. */
export interface StartedStack {
  readonly child: ChildProcess;
  readonly env: Record<string, string>;
  readonly ports: Record<string, number>;
  /** Exit code once the script has exited (undefined before), and when, ms since the epoch. */
  readonly exited: { code: number | null | undefined; at: number };
  readonly tmp: string;
  /** Whether it runs on a pseudo-terminal (its output is then the terminal's, `\r\n` line ends). */
  readonly terminal: boolean;
  /** Everything the script printed so far (stdout and stderr, interleaved as they came). */
  output: string;
}

/** The ports whose /health answers once a service has started (and registered its stop). */
export const HEALTH_PORTS = [
  'GATEWAY_OPS_PORT',
  'ROUND_ENGINE_PORT',
  'PROJECTOR_PORT',
  'EDGE_HTTP_PORT',
  'WT_HTTP_PORT',
  'SANDBOX_PORT',
  'WALLET_SAGA_HTTP_PORT',
  'SETTLEMENT_HTTP_PORT',
  'BOTS_HTTP_PORT',
] as const;

/** Every port of the stack: each must be closed after the stop. */
export const PORT_NAMES = [
  ...HEALTH_PORTS,
  'GATEWAY_PORT',
  'API_PORT',
  'EDGE_WS_PORT',
  'GRPC_PORT',
  'WT_PORT',
] as const;

const stacks: StartedStack[] = [];

/**
 * Starts `bash scripts/start.sh` in its own process group (a terminal's foreground job) with every
 * port free and every name unique; `extraEnv` is added last. Output is plain (NO_COLOR), so each
 * line reads `[service] {json}`. With `terminal`, the script runs on a pseudo-terminal of util-linux
 * `script`, as in a terminal window.
 */
export async function startStack(
  extraEnv: Record<string, string> = {},
  { terminal = false }: { terminal?: boolean } = {},
): Promise<StartedStack> {
  const id = randomBytes(4).toString('hex');
  const tmp = mkdtempSync(join(tmpdir(), 'start-script-'));
  const ports: Record<string, number> = {};
  for (const n of PORT_NAMES) ports[n] = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    TOPIC_NAMESPACE: `t-stop-${id}-`,
    DATABASE_SCHEMA: `t_stop_${id}`,
    PROJECTOR_GROUP: `t-stop-${id}-projector`,
    SETTLEMENT_GROUP: `t-stop-${id}-settlement`,
    WALLET_SAGA_GROUP: `t-stop-${id}-wallet-saga`,
    SANDBOX_DB_SCHEMA: `t_stop_${id}_sbx`,
    SANDBOX_SECRET_FILE: join(tmp, 'signing-secret'),
    BOTS_OPERATOR_FILE: join(tmp, 'operator.json'),
    BOTS_PLAYERS: '2',
    API_SOCKET: join(tmp, 'api.sock'),
    API_ENGINE_URL: `http://127.0.0.1:${ports.ROUND_ENGINE_PORT}`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.GATEWAY_PORT}`,
    // The gRPC proxy's client sends no key here.
    AUTH_REQUIRE_GRPC: 'false',
    LOG_LEVEL: 'info',
    // Plain prefixes ("[api] {...}"), which the checks read.
    NO_COLOR: '1',
    ...extraEnv,
  };
  delete env.FORCE_COLOR;
  // vitest sets NODE_ENV=test, which changes kafkajs' retry defaults; npm start runs without it.
  delete env.NODE_ENV;
  // Its own process group, as a terminal's foreground job: a SIGINT to the group is a Ctrl-C.
  const child = terminal
    ? // `script` runs the command with `$SHELL -c`; `exec` makes start.sh the terminal's foreground
      // process itself. Without it a shell that does not exec its last command (dash, the /bin/sh of
      // Debian, which a CI's SHELL may name) waits in between and dies of the Ctrl-C's SIGINT, so
      // `script -e` reports 130 although start.sh stopped cleanly with 0.
      spawn('script', ['-qfec', 'exec bash scripts/start.sh', '/dev/null'], {
        cwd: ROOT,
        env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn('bash', ['scripts/start.sh'], {
        cwd: ROOT,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const stack: StartedStack = {
    child,
    env,
    ports,
    tmp,
    terminal,
    exited: { code: undefined, at: 0 },
    output: '',
  };
  stacks.push(stack);
  const onData = (d: Buffer) => {
    stack.output += d.toString();
    if (stack.output.length > 4_000_000) stack.output = stack.output.slice(-2_000_000);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('exit', (code) => {
    stack.exited.code = code;
    stack.exited.at = Date.now();
  });
  return stack;
}

/**
 * Resolves once every service of `stack` answers: each /health, the edges' /ready (the WebTransport
 * edge's Deno.serve answers /health before the rest of its start-up), and /api/games through the
 * gateway.
 * @throws with the output's tail when one does not answer within its bound.
 */
export async function waitStackReady(stack: StartedStack): Promise<void> {
  try {
    for (const name of HEALTH_PORTS)
      await waitReady(`http://127.0.0.1:${stack.ports[name]}/health`, 150_000, 500);
    await waitReady(`http://127.0.0.1:${stack.ports.EDGE_HTTP_PORT}/ready`, 60_000, 500);
    await waitReady(`http://127.0.0.1:${stack.ports.WT_HTTP_PORT}/ready`, 60_000, 500);
    await waitReady(`http://127.0.0.1:${stack.ports.GATEWAY_PORT}/api/games`, 30_000, 500);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${stack.output.slice(-6000)}`);
  }
}

/**
 * Ctrl-C (SIGINT to the job's process group; on a pseudo-terminal, the ^C character typed into it);
 * resolves once the script has exited, with its time, ms.
 */
export async function ctrlC(stack: StartedStack): Promise<number> {
  const sentAt = Date.now();
  if (stack.terminal) stack.child.stdin?.write('\x03');
  else process.kill(-(stack.child.pid as number), 'SIGINT');
  await waitFor('npm start to exit', () => (stack.exited.code === undefined ? undefined : true), 60_000, 100);
  return stack.exited.at - sentAt;
}

/**
 * The assertion message of a stop: each service's exit line and error lines from the whole output
 * (the tail alone may not reach back to the service that failed), then the tail.
 */
export function howItStopped(stack: StartedStack): string {
  const how = stack.output
    .split('\n')
    .filter((l) =>
      / exited with code |"level":(50|60)|shutting down|signal during start-up|did not finish/.test(l),
    )
    .map((l) => l.slice(0, 400))
    .join('\n');
  return `${how}\n--- tail ---\n${stack.output.slice(-5000)}`;
}

/** Descendants of `pid` (from /proc), deepest last. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let kids: number[] = [];
    try {
      for (const t of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/))
        if (t) kids.push(Number(t));
    } catch {
      kids = [];
    }
    for (const k of kids) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return out;
}

/**
 * For the test file's afterAll: kills what is left of every stack started here (a test that failed
 * before its stop), then drops its schemas, deletes its topics and removes its folder.
 */
export async function removeStacks(): Promise<void> {
  for (const { child, exited, env, tmp } of stacks.splice(0)) {
    if (child.pid && exited.code === undefined) {
      for (const p of descendants(child.pid).reverse()) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {}
      }
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
    const config = loadConfig(env);
    const sql = createSql(config, { max: 1 });
    await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`).catch(() => {});
    await sql.unsafe(`drop schema if exists "${env.SANDBOX_DB_SCHEMA}" cascade`).catch(() => {});
    await sql.end({ timeout: 5 });
    const admin = createKafka(config, 'start-script-cleanup', createLogger('test', 'error')).admin();
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(config.kafka.topicNamespace));
    if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
    rmSync(tmp, { recursive: true, force: true });
  }
}
