/**
 * Test helpers that run the project's real entry points as child processes (e2e tier).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

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

/** A free TCP port on 127.0.0.1 (the OS picks it; a tiny race before use is accepted in tests). */
export async function freePort(): Promise<number> {
  return await new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => res(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
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

/**
 * Starts `tsx <entry> [args]` from the repository root with `env` added to the current environment.
 * Output is captured (and echoed when E2E_VERBOSE is set).
 */
export function startService(
  entry: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Service {
  return startProcess(process.execPath, ['--import', 'tsx', entry, ...args], env);
}

/**
 * Starts any `command args` from the repository root (e.g. the Deno WebTransport edge) with `env`
 * added to the current environment; output captured as by startService.
 */
export function startProcess(command: string, args: readonly string[], env: Record<string, string>): Service {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

/** Polls `check` every `intervalMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`,
  );
}

/** Starts the Deno WebTransport edge (WT_EDGE_ARGS) with `env` added, output captured as by startService. */
export function startWebTransportEdge(env: Record<string, string>): Service {
  return startProcess(DENO_BIN, WT_EDGE_ARGS, env);
}
