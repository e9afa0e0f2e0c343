/**
 * WebTransport side of the edge benchmarks: the Deno edge (services/edge-webtransport) as a child
 * process with a throw-away development certificate, and headless Chromium (playwright-core) as
 * the client, since Node has no WebTransport client. Sessions are opened from `pages` pages,
 * each in its own browser context (its own renderer process), the way a demo page does it:
 * the certificate hash from the edge's `/cert-hash`, then `new WebTransport(url,
 * {serverCertificateHashes})`. Each datagram's latency is taken in the page.
 */
import { readFileSync, rmSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { BROWSER_ARGS, CHROMIUM } from '../tests/support/chromium.ts';
import { waitFor } from '../tests/support/poll.ts';
import { devCertDir, type Service, startWebTransportEdge, waitReady } from '../tests/support/processes.ts';
import type { OpenReply, StatsReply } from './edge-clients.ts';
import { type BenchLog, processTree, scrape } from './edge-harness.ts';
import { type ClientGroup, mergeOpen, mergeStats } from './edge-pool.ts';

export interface WtEdge {
  readonly service: Service;
  readonly pid: number;
  readonly quicPort: number;
  readonly httpPort: number;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Deno exposes no GC trigger to another process: only a pause. */
  gc(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the Deno WebTransport edge on free ports and waits for /ready. */
export async function startWtEdge(log: BenchLog): Promise<WtEdge> {
  const certDir = devCertDir('bench-wt-cert-');
  const service = startWebTransportEdge({
    TOPIC_NAMESPACE: log.ns,
    WT_HOST: '127.0.0.1',
    WT_PORT: '0',
    WT_HTTP_PORT: '0',
    WT_DEV_CERT_DIR: certDir,
    EDGE_DRAIN_MS: '500',
    // Measured without credentials, as the other protocols (see startNodeEdge).
    AUTH_REQUIRE_WT: 'false',
    LOG_LEVEL: 'info',
  });
  const started = await waitFor(
    'the WebTransport edge to start',
    () => {
      if (service.child.exitCode !== null) throw new Error(`WebTransport edge exited:\n${service.output()}`);
      for (const line of service.output().split('\n')) {
        if (!line.startsWith('{')) continue;
        const l = JSON.parse(line) as { msg?: string; quicPort?: number; httpPort?: number };
        if (l.msg === 'webtransport edge started') return l;
      }
      return undefined;
    },
    90_000,
    200,
  );
  const httpPort = started.httpPort ?? 0;
  await waitReady(`http://127.0.0.1:${httpPort}/ready`);
  return {
    service,
    pid: service.child.pid as number,
    quicPort: started.quicPort ?? 0,
    httpPort,
    metric: (name, labels) => scrape(`http://127.0.0.1:${httpPort}/metrics`, name, labels),
    gc: () => new Promise((r) => setTimeout(r, 1_000)),
    async stop() {
      await service.stop('SIGTERM');
      rmSync(certDir, { recursive: true, force: true });
    },
  };
}

interface PageBench {
  lat: number[];
  ts: number[];
  since: number;
  first: number;
  last: number;
  sessions: WebTransport[];
}

/** Runs in the page: opens `n` sessions, at most `concurrency` handshakes at once. */
async function openInPage(a: { n: number; url: string; hashUrl: string; concurrency: number }) {
  const w = window as unknown as { bench: PageBench };
  w.bench ??= { lat: [], ts: [], since: Number.POSITIVE_INFINITY, first: 0, last: 0, sessions: [] };
  const b = w.bench;
  const cert = (await (await fetch(a.hashUrl)).json()) as { hash: string };
  const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
  const decoder = new TextDecoder();
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const lane = async () => {
    while (next < a.n) {
      next++;
      const wt = new WebTransport(a.url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
      try {
        await wt.ready;
      } catch (err) {
        failed++;
        firstError ??= String(err);
        continue;
      }
      b.sessions.push(wt);
      void (async () => {
        const reader = wt.datagrams.readable.getReader();
        for (;;) {
          const { value: d, done } = await reader.read();
          if (done || !d) break;
          const now = performance.timeOrigin + performance.now();
          const m = /"timestamp":(\d+)/.exec(decoder.decode(d));
          const ts = m ? Number(m[1]) : Number.NaN;
          if (!(ts >= b.since)) continue;
          b.lat.push(now - ts);
          b.ts.push(ts);
          if (b.first === 0) b.first = now;
          b.last = now;
        }
      })().catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: Math.min(a.concurrency, a.n) }, lane));
  return { opened: a.n - failed, failed, firstError, ms: performance.now() - t0 };
}

/**
 * Sessions held by headless Chromium: `browsers` browser processes (each has its own network
 * service, where all of its QUIC connections are handled) with `pages` pages in all, each page
 * in a context of its own.
 */
export async function browserClients(
  edge: WtEdge,
  pages: number,
  browsers = 1,
  concurrency = 32,
): Promise<ClientGroup> {
  const bs: Browser[] = [];
  for (let i = 0; i < browsers; i++)
    bs.push(await chromium.launch({ executablePath: CHROMIUM, args: [...BROWSER_ARGS] }));
  const ps: Page[] = [];
  for (let i = 0; i < pages; i++) {
    const page = await (await (bs[i % bs.length] as Browser).newContext()).newPage();
    // tsx compiles with keepNames, which wraps nested functions in `__name(...)`; the page lacks it.
    await page.addInitScript('window.__name = (f) => f;');
    // 127.0.0.1 is a secure context (WebTransport needs one); the edge's origin serves the hash.
    await page.goto(`http://127.0.0.1:${edge.httpPort}/health`);
    ps.push(page);
  }
  const url = `https://127.0.0.1:${edge.quicPort}/wt?game=crash`;
  const hashUrl = `http://127.0.0.1:${edge.httpPort}/cert-hash`;
  const each = <T>(fn: (p: Page, i: number) => Promise<T>) => Promise.all(ps.map(fn));
  return {
    // Chromium runs as a child of this process (playwright's launch); its renderers below it.
    get pids() {
      return processTree(process.pid).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('chrom');
        } catch {
          return false;
        }
      });
    },
    async open(count) {
      const replies: OpenReply[] = await each((p, k) => {
        const n = Math.floor(count / pages) + (k < count % pages ? 1 : 0);
        return p.evaluate(openInPage, { n, url, hashUrl, concurrency });
      });
      return mergeOpen(replies);
    },
    async reset(since) {
      await each((p) =>
        p.evaluate((s) => {
          const b = (window as unknown as { bench: PageBench }).bench;
          b.lat = [];
          b.ts = [];
          b.since = s;
          b.first = 0;
          b.last = 0;
        }, since),
      );
    },
    async count() {
      const n = await each((p) =>
        p.evaluate(() => (window as unknown as { bench: PageBench }).bench.lat.length),
      );
      return n.reduce((s, x) => s + x, 0);
    },
    async stats() {
      const parts: StatsReply[] = await each(async (p) => {
        const b = await p.evaluate(() => {
          const { lat, ts, first, last } = (window as unknown as { bench: PageBench }).bench;
          return { lat, ts, first, last };
        });
        return {
          count: b.lat.length,
          latencies: Float64Array.from(b.lat),
          timestamps: Float64Array.from(b.ts),
          first: b.first,
          last: b.last,
        };
      });
      return mergeStats(parts);
    },
    async close() {
      await each((p) =>
        p.evaluate(() => {
          for (const s of (window as unknown as { bench: PageBench }).bench?.sessions ?? []) s.close();
        }),
      ).catch(() => {});
      for (const b of bs) await b.close();
    },
  };
}
