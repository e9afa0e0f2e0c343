/**
 * Helpers of the WebTransport e2e test. Browser side: open a session in the page the way a demo
 * page does (hash from the edge's `/cert-hash`, then `new WebTransport(url,
 * {serverCertificateHashes})`) and collect its datagrams in `window.got[name]`. Kept free of
 * tests/helpers so that `deno check` type-checks this folder on its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { DENO_BIN, waitFor as pollUntil, WT_EDGE_ARGS } from '../../tests/helpers/processes.ts';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname as string, '..', '..');

/** `prefix` plus 8 random hex characters, for topic namespaces. */
export function uniqueId(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

/** The Deno edge as a child process. */
export interface WtEdgeProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Its ports, once it logged that it started. @throws when it exits first or within 60 s. */
  readonly started: Promise<{ quicPort: number; httpPort: number }>;
  /** Its exit code (or signal). */
  readonly exited: Promise<number | string | null>;
  /** SIGKILL unless it has exited; resolves when it has. */
  kill(): Promise<void>;
}

/** Starts services/edge-webtransport/main.ts under Deno on free ports with `env` added. */
export function startWtEdge(env: Record<string, string>): WtEdgeProcess {
  const child = spawn(DENO_BIN, [...WT_EDGE_ARGS], {
    cwd: ROOT,
    env: { ...process.env, WT_PORT: '0', WT_HTTP_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const onData = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string | null>((res) =>
    child.once('exit', (code, sig) => res(code ?? sig)),
  );
  const started = Promise.race([
    waitFor(
      'the WebTransport edge to start',
      () => {
        const line = parseLogLines(out).find((l) => l.msg === 'webtransport edge started');
        return line && { quicPort: line.quicPort ?? 0, httpPort: line.httpPort ?? 0 };
      },
      60_000,
    ),
    exited.then((code) => {
      throw new Error(`the WebTransport edge exited (${code}) before starting:\n${out}`);
    }),
  ]);
  started.catch(() => {}); // reported to whoever awaits it
  return {
    child,
    output: () => out,
    started,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The fields of the edge's JSON log lines that the test reads. */
export interface LogLine {
  msg?: string;
  status?: number;
  path?: string;
  error?: string;
  quicPort?: number;
  httpPort?: number;
}

/** The JSON lines (pino) of a process's output. */
export function parseLogLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** A sample of the edge's `/metrics`, e.g. `edge_subscribers` with labels `protocol="webtransport"`; 0 when absent. */
export async function readMetric(httpPort: number, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  // Other labels (the registry's `service`) may follow the ones asked for.
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{${labels}}`) || l.startsWith(`${name}{${labels},`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Polls `check` every 100 ms until it returns a value other than undefined; throws after `timeoutMs`. */
export function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  return pollUntil(what, check, timeoutMs, 100);
}

export { BROWSER_ARGS, CHROMIUM } from '../../tests/helpers/chromium.ts';

/** One received datagram: its text and size in bytes. */
export interface Received {
  text: string;
  bytes: number;
}

interface PageState {
  wt: Record<string, WebTransport>;
  got: Record<string, Received[]>;
}

/**
 * Opens session `name` on `url` and starts collecting its datagrams.
 * @throws when the session is refused (the handshake fails in the browser).
 */
export async function openSession(page: Page, name: string, url: string, httpPort: number): Promise<void> {
  await page.evaluate(
    async ({ name, url, hashUrl }) => {
      const state = window as unknown as PageState;
      const cert = (await (await fetch(hashUrl)).json()) as { hash: string };
      const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
      const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
      state.wt ??= {};
      state.got ??= {};
      state.wt[name] = wt;
      const got: Received[] = [];
      state.got[name] = got;
      await Promise.race([
        wt.ready,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no session within 15 s')), 15_000)),
      ]);
      void (async () => {
        const reader = wt.datagrams.readable.getReader();
        for (;;) {
          const { value: d, done } = await reader.read();
          if (done || !d) break;
          got.push({ text: new TextDecoder().decode(d), bytes: d.byteLength });
        }
      })().catch(() => {});
    },
    { name, url, hashUrl: `http://127.0.0.1:${httpPort}/cert-hash` },
  );
}

/** Datagrams session `name` has received so far. */
export async function receivedRounds(page: Page, name: string): Promise<Received[]> {
  return await page.evaluate((n) => (window as unknown as PageState).got[n] ?? [], name);
}

/** Closes session `name` from the browser. */
export async function closeSession(page: Page, name: string): Promise<void> {
  await page.evaluate((n) => (window as unknown as PageState).wt[n]?.close(), name);
}

/** Tries to open a session: `open` (then closed again) or `refused: <browser's error>`. */
export async function tryOpen(page: Page, url: string, httpPort: number): Promise<string> {
  return await page.evaluate(
    async ({ url, hashUrl }) => {
      const cert = (await (await fetch(hashUrl)).json()) as { hash: string };
      const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
      const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
      try {
        await Promise.race([
          wt.ready,
          new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 15 s')), 15_000)),
        ]);
        wt.close();
        return 'open';
      } catch (err) {
        return `refused: ${(err as Error).message}`;
      }
    },
    { url, hashUrl: `http://127.0.0.1:${httpPort}/cert-hash` },
  );
}
