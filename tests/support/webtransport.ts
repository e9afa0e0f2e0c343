/**
 * Helpers of the WebTransport e2e tests. Process side: a fresh namespace with its topics, a
 * development certificate and a producer (`createWtTestBed`), and the Deno edge as a child process
 * (`startWtEdge`). Browser side: open a session in the page the way a demo page does (hash from
 * the edge's `/cert-hash`, then `new WebTransport(url, {serverCertificateHashes})`) and collect its
 * datagrams in `window.got[name]`.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Producer } from 'kafkajs';
import type { Page } from 'playwright-core';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { type Config, loadConfig } from './config.ts';
import { waitFor as pollUntil } from './poll.ts';
import { devCertDir, startWebTransportEdge, uniqueId } from './processes.ts';

/** What a WebTransport e2e test runs its edge against; `close()` undoes all of it. */
export interface WtTestBed {
  /** TOPIC_NAMESPACE of this test file (give it to the edge). */
  readonly ns: string;
  readonly config: Config;
  /** WT_DEV_CERT_DIR holding a fresh development certificate. */
  readonly certDir: string;
  /** Connected to the broker; appends to this namespace's topics. */
  readonly producer: Producer;
  /** Disconnects, deletes the `rounds` and `auth-keys` topics, removes the certificate. */
  close(): Promise<void>;
}

/** A fresh namespace (`<prefix><random>-`) with its `rounds` and `auth-keys` topics and a certificate. */
export async function createWtTestBed(prefix: string): Promise<WtTestBed> {
  const ns = `${uniqueId(prefix)}-`;
  const config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
  const certDir = devCertDir(`${prefix}cert-`);
  const kafka = createKafka(config, `${prefix}e2e`, createLogger(`${prefix}e2e`, 'warn'));
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'authKeys']);
  const producer = kafka.producer();
  await producer.connect();
  return {
    ns,
    config,
    certDir,
    producer,
    async close() {
      await producer.disconnect();
      await admin
        .deleteTopics({ topics: [topicName(config, 'rounds'), topicName(config, 'authKeys')] })
        .catch(() => {});
      await admin.disconnect();
      rmSync(certDir, { recursive: true, force: true });
    },
  };
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

/** Starts services/edge-webtransport/main.ts under Deno (tests/helpers) on free ports with `env` added. */
export function startWtEdge(env: Record<string, string>): WtEdgeProcess {
  const service = startWebTransportEdge({ WT_PORT: '0', WT_HTTP_PORT: '0', ...env });
  const { child } = service;
  const exited = new Promise<number | string | null>((res) =>
    child.once('exit', (code, sig) => res(code ?? sig)),
  );
  const started = Promise.race([
    waitFor(
      'the WebTransport edge to start',
      () => {
        const line = parseLogLines(service.output()).find((l) => l.msg === 'webtransport edge started');
        return line && { quicPort: line.quicPort ?? 0, httpPort: line.httpPort ?? 0 };
      },
      60_000,
    ),
    exited.then((code) => {
      throw new Error(`the WebTransport edge exited (${code}) before starting:\n${service.output()}`);
    }),
  ]);
  started.catch(() => {}); // reported to whoever awaits it
  return {
    child,
    output: service.output,
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

export { BROWSER_ARGS, CHROMIUM } from './chromium.ts';

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
