/**
 * WebSocket connection setup rate with tokens: two real edge processes
 * (services/edge/main.ts) on one topic namespace, one with AUTH_REQUIRE_WS=true where every
 * connection to /ws/crash offers a fresh `tok_` (minted here with the shared AUTH_TOKEN_SECRET,
 * as POST /api/auth/token would) as its subprotocol, one with AUTH_REQUIRE_WS=false connected to
 * without a credential. Connections open in sequential batches of `batch` concurrent ones; each is
 * closed as soon as its upgrade (101) completes, and the batch's closes are awaited outside the
 * timed part. Rate = connections / time spent opening; handshake latency per connection too.
 * The key's rate_limit (connection attempts a minute, per edge process) is 1,000,000.
 */
import WebSocket from 'ws';
import { newKeyId, newSecret, secretHash } from '../lib/auth/credentials.ts';
import { issueToken } from '../lib/auth/tokens.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startService } from '../tests/support/processes.ts';
import { benchNamespace, pct } from './auth-support.ts';
import { type LatencySummary, latencySummary } from './lib.ts';

/** The table's latency columns, ms to the hundredth. */
const figures = (s: LatencySummary) => ({ 'p50 ms': s.p50.toFixed(2), 'p99 ms': s.p99.toFixed(2) });

interface Opened {
  readonly ms: number;
  readonly sock: WebSocket;
}

function open(url: string, protocols: string[]): Promise<Opened> {
  const t0 = performance.now();
  const sock = new WebSocket(url, protocols);
  return new Promise((resolve, reject) => {
    sock.once('open', () => resolve({ ms: performance.now() - t0, sock }));
    sock.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(new Error(`upgrade refused: HTTP ${res.statusCode}`));
    });
    sock.once('error', reject);
  });
}

async function closeAll(socks: readonly WebSocket[]): Promise<void> {
  await Promise.all(
    socks.map(
      (s) =>
        new Promise<void>((r) => {
          s.once('close', () => r());
          s.close(1000);
        }),
    ),
  );
}

/** Opens `total` connections in batches; `protocols()` is called per batch (fresh tokens). */
async function run(url: string, total: number, batch: number, protocols: () => string[]) {
  const lat: number[] = [];
  let openMs = 0;
  for (let done = 0; done < total; done += batch) {
    const n = Math.min(batch, total - done);
    const offers = Array.from({ length: n }, protocols);
    const t0 = performance.now();
    const opened = await Promise.all(offers.map((p) => open(url, p)));
    openMs += performance.now() - t0;
    for (const o of opened) lat.push(o.ms);
    await closeAll(opened.map((o) => o.sock));
  }
  return { lat, openMs };
}

/**
 * @returns per-run rows and a summary.
 * @throws Error when an edge does not come up or any upgrade is refused.
 */
export async function benchWs(opts: {
  connections: number;
  batch: number;
  rounds: number;
}): Promise<{ runs: Record<string, string | number>[]; summary: Record<string, string | number>[] }> {
  const ns = await benchNamespace('bench-auth-ws-');
  const keyId = newKeyId();
  await ns.addKey({
    key_id: keyId,
    name: 'bench streamer',
    kind: 'private',
    secret_sha256: secretHash(newSecret('private')),
    scopes: ['stream:*'],
    rate_limit: 1_000_000,
    allowed_origins: [],
    admin: false,
    visitor_id: null,
    bound_domain: null,
    created_at: Date.now(),
  });
  const procs: Service[] = [];
  try {
    const start = async (requireWs: boolean) => {
      const http = await freePort();
      const ws = await freePort();
      const svc = startService('services/edge/main.ts', {
        ...ns.env,
        EDGE_HTTP_PORT: String(http),
        EDGE_WS_PORT: String(ws),
        GRPC_PORT: String(await freePort()),
        AUTH_REQUIRE_WS: String(requireWs),
        LOG_LEVEL: 'warn',
      });
      procs.push(svc);
      return { svc, http, url: `ws://127.0.0.1:${ws}/ws/crash` };
    };
    const off = await start(false);
    const on = await start(true);
    for (const e of [off, on]) {
      await waitFor('edge ready', async () => {
        const r = await fetch(`http://127.0.0.1:${e.http}/ready`).catch(() => undefined);
        return r?.status === 200 ? true : undefined;
      }).catch((err) => {
        throw new Error(`${String(err)}\nedge output: ${e.svc.output()}`);
      });
    }
    // The auth-on edge must refuse a connection without a token, or the comparison means nothing.
    const refused = await open(on.url, []).then(
      (o) => {
        o.sock.terminate();
        return false;
      },
      () => true,
    );
    if (!refused) throw new Error('the AUTH_REQUIRE_WS=true edge accepted a connection without a token');
    // Warm-up: JIT and the key table's first lookups on both edges.
    await run(off.url, opts.batch, opts.batch, () => []);
    await run(on.url, opts.batch, opts.batch, () => [issueToken(ns.tokenSecret, keyId, Date.now()).token]);

    const per = Math.ceil(opts.connections / opts.rounds);
    const runs: Record<string, string | number>[] = [];
    const acc = { off: { lat: [] as number[], ms: 0 }, on: { lat: [] as number[], ms: 0 } };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const mode of ['off', 'on'] as const) {
        const res =
          mode === 'off'
            ? await run(off.url, per, opts.batch, () => [])
            : await run(on.url, per, opts.batch, () => [issueToken(ns.tokenSecret, keyId, Date.now()).token]);
        acc[mode].lat.push(...res.lat);
        acc[mode].ms += res.openMs;
        runs.push({
          run: `${r}/${opts.rounds}`,
          what:
            mode === 'off'
              ? 'AUTH_REQUIRE_WS=false, no credential'
              : 'AUTH_REQUIRE_WS=true, tok_ subprotocol',
          connections: res.lat.length,
          'conn/s': Math.round(res.lat.length / (res.openMs / 1000)),
          ...figures(latencySummary(res.lat)),
        });
      }
    }
    const rate = (m: 'off' | 'on') => acc[m].lat.length / (acc[m].ms / 1000);
    const lat = { off: latencySummary(acc.off.lat), on: latencySummary(acc.on.lat) };
    const summary: Record<string, string | number>[] = (['off', 'on'] as const).map((m) => ({
      what: m === 'off' ? 'no credential (auth off)' : 'tok_ per connection (auth on)',
      connections: acc[m].lat.length,
      'conn/s': Math.round(rate(m)),
      ...figures(lat[m]),
    }));
    summary.push({
      what: 'change, on vs off (+ = more)',
      connections: '',
      'conn/s': pct(rate('on'), rate('off')),
      'p50 ms': pct(lat.on.p50, lat.off.p50),
      'p99 ms': pct(lat.on.p99, lat.off.p99),
    });
    return { runs, summary };
  } finally {
    for (const p of procs) await p.stop('SIGTERM', 5_000);
    await ns.close();
  }
}
