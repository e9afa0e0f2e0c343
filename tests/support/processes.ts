/**
 * Test helpers that run the project's real entry points as child processes (e2e tier).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from './poll.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..');

/** Deno from the npm package `deno` (services/edge-webtransport runs on it). */
export const DENO_BIN = resolve(ROOT, 'node_modules/.bin/deno');
/**
 * `deno` arguments of the WebTransport edge, as scripts/start.sh runs it: QUIC is unstable API;
 * writes only under .data (where a missing token secret file is created by the first process).
 */
export const WT_EDGE_ARGS: readonly string[] = [
  'run',
  '--unstable-net',
  '--allow-net',
  '--allow-read',
  '--allow-write=.data',
  '--allow-env',
  '--allow-sys',
  'services/edge-webtransport/main.ts',
];

/**
 * Ports handed out by `freePort`: below Linux's default ephemeral range (32768–60999,
 * /proc/sys/net/ipv4/ip_local_port_range), where the OS picks a `listen(0)` port and every outgoing
 * connection's source port. A port the OS picked (listen(0)) was free then, but until the service
 * binds it the OS may give it to a `*_PORT: '0'` listener or a client socket: a stack once failed
 * with EADDRINUSE on such a port. Outside that range only another freePort can take it.
 */
const FREE_PORT_RANGE = { from: 20_000, to: 32_767 } as const;

/** Whether `port` can be listened on at 127.0.0.1 now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

/**
 * A free TCP port on 127.0.0.1 in FREE_PORT_RANGE, picked at random and checked by listening on it.
 * @throws after 200 ports in use.
 */
export async function freePort(): Promise<number> {
  const { from, to } = FREE_PORT_RANGE;
  for (let i = 0; i < 200; i++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found in ${from}-${to} after 200 tries`);
}

/** A random suffix for topic namespaces, schemas and groups. */
export function uniqueId(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

export interface Service {
  readonly child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Sends `signal` and waits for exit (SIGKILL after `graceMs`). @returns the exit code or signal. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | string | null>;
}

/** Node's arguments that preload lib/early-signals.ts, as scripts/start.sh runs every Node service. */
export const EARLY_SIGNALS_PRELOAD: readonly string[] = ['--import', './lib/early-signals.ts'];

/**
 * Starts `tsx <entry> [args]` from the repository root with `env` added to the current environment.
 * A service's main (`services/…`) gets lib/early-signals.ts preloaded as `npm start` does
 * (scripts/start.sh), so a SIGTERM sent while its modules still load is held and ends in a clean
 * stop, as in production, instead of killing it. Output is captured (and echoed when E2E_VERBOSE is
 * set).
 */
export function startService(
  entry: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Service {
  const preload = entry.startsWith('services/') ? EARLY_SIGNALS_PRELOAD : [];
  return startProcess(process.execPath, [...preload, '--import', 'tsx', entry, ...args], env);
}

/**
 * Children still running when this test process exits (a test that failed before its stop, a
 * worker ended early): killed then, so no service outlives its test file and keeps consuming.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/**
 * Starts any `command args` from `cwd` (the repository root by default; e.g. the Deno WebTransport
 * edge) with `env` added to the current environment; output captured as by startService.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  cwd: string = ROOT,
): Service {
  const child = spawn(command, args, {
    cwd,
    // No API proxy socket unless a test asks for one: the default path is shared with `npm start`.
    env: { ...process.env, LOG_LEVEL: 'info', API_SOCKET: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  const onData = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string | null>((res) =>
    child.once('exit', (code, sig) => res(code ?? sig)),
  );
  return {
    child,
    output: () => out,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
}

/** Starts the Deno WebTransport edge (WT_EDGE_ARGS) with `env` added, output captured as by startService. */
export function startWebTransportEdge(env: Record<string, string>): Service {
  return startProcess(DENO_BIN, WT_EDGE_ARGS, env);
}

/**
 * Sends `signal` to `s` (SIGKILL after `graceMs`) and times the stop.
 * @returns the exit code (or signal) and how long the stop took, ms.
 */
export async function timedStop(
  s: Service,
  graceMs = 10_000,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{ code: number | string | null; ms: number }> {
  const t = performance.now();
  const code = await s.stop(signal, graceMs);
  return { code, ms: performance.now() - t };
}

/** GET `url`'s status, or 0 when nothing answers within 3 s. */
export async function statusOf(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}

/** Resolves once GET `url` answers 200 (polled every `intervalMs`). @throws after `timeoutMs`. */
export async function waitReady(url: string, timeoutMs = 60_000, intervalMs = 200): Promise<void> {
  await waitFor(
    `${url} to answer 200`,
    async () => ((await statusOf(url)) === 200 ? true : undefined),
    timeoutMs,
    intervalMs,
  );
}

/**
 * A new temporary folder with a development certificate of the WebTransport edge in it (for
 * WT_DEV_CERT_DIR), made by scripts/dev-cert.sh; the caller removes it.
 * @throws when the script fails.
 */
export function devCertDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('bash', [join(ROOT, 'scripts/dev-cert.sh')], {
    env: { ...process.env, WT_DEV_CERT_DIR: dir },
    stdio: 'ignore',
  });
  return dir;
}
