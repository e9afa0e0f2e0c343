/**
 * Edge fan-out benchmark: many subscribers of `crash` on ONE edge process, per level of
 * `--plan` (default WebSocket 1k/10k/20k, SSE 1k/10k, gRPC 1k over 1 and over 10 HTTP/2
 * connections, WebTransport 1k/10k). Each level gets
 * a fresh edge process; per level it reports
 *
 * - connect: wall time to open the subscribers (handshakes in parallel, bounded per client);
 * - memory: the edge's VmRSS with `WARM` subscribers open after two rounds (warm code paths),
 *   then with all of them open and 5 s idle, each read after a full GC in the edge (SIGUSR2 to
 *   bench/edge-gc-hook.ts; the Deno edge has no such hook: a pause only);
 *   (after − before) / added subscribers, and the same for the V8 heap used (edge /metrics);
 * - steady latency: `--steady-rounds` rounds `--steady-gap-ms` apart (one round's fan-out alone);
 * - burst: `--burst` rounds appended in one batch; deliveries/s = deliveries / (last receive −
 *   append start), with its latency percentiles (these include the queue of the burst itself);
 * - CPU of the edge (and the share of it spent in the kernel) and of the clients during the
 *   burst, as % of one core (who is the bottleneck), and the edge's CPU time per delivery: unlike
 *   the rates, it hardly depends on what else the machine runs, and 1 s / it is what one fully
 *   available core could deliver.
 *
 * Clients: WebSocket and SSE over raw `net` sockets (bench/edge-wire.ts) in forked client
 * processes of at most `--per-process` (5,000) each, bound to several 127.A.B.x source
 * addresses; gRPC streams multiplexed over `grpc:<count>:<connections>` HTTP/2 connections
 * (one grpc-js channel per connection, streams spread round-robin); WebTransport sessions with
 * Deno's own WebTransport client in processes of at most `--wt-per-process` (2,500) sessions
 * (bench/edge-wt-native.ts; each session is a UDP socket there), or with `--wt-client chromium` in
 * headless Chromium. For native WebTransport clients, notes say how many datagrams were missed
 * and where they can have gone. A level asking for more subscribers than the edge's open-files
 * limit allows is capped (and says so); the WebTransport edge holds every session on one UDP
 * socket, so there the clients' limit counts. Baseline in the same run: the protocol's first level.
 *
 * Usage: tsx bench/edge-fanout.ts [--plan ws:1000,ws:10000,ws:20000,sse:1000,sse:10000,grpc:1000:1,...]
 *          [--burst 50] [--steady-rounds 10] [--steady-gap-ms 1000] [--per-process 5000]
 *          [--wt-client native|chromium] [--wt-per-process 2500] [--wt-pages 4] [--wt-browsers 2]
 *          [--edge-cpu-prof <dir>]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Protocol } from './edge-clients.ts';
import { cpuOf, openBenchLog, openFilesLimit, procStats, sleep, startNodeEdge } from './edge-harness.ts';
import { awaitDeliveries, type ClientGroup, processClients } from './edge-pool.ts';
import { wallNow } from './edge-wire.ts';
import { browserClients, startWtEdge } from './edge-wt.ts';
import { isNativeWt, nativeClients, probeWindow } from './edge-wt-native.ts';
import { latencySummary, report } from './lib.ts';

const { values } = parseArgs({
  options: {
    plan: {
      type: 'string',
      default: 'ws:1000,ws:10000,ws:20000,sse:1000,sse:10000,grpc:1000:1,grpc:1000:10,wt:1000,wt:10000',
    },
    burst: { type: 'string', default: '50' },
    'steady-rounds': { type: 'string', default: '10' },
    'steady-gap-ms': { type: 'string', default: '1000' },
    'per-process': { type: 'string', default: '5000' },
    'wt-client': { type: 'string', default: 'native' },
    'wt-per-process': { type: 'string', default: '2500' },
    'wt-pages': { type: 'string', default: '4' },
    'wt-browsers': { type: 'string', default: '2' },
    'edge-cpu-prof': { type: 'string' },
  },
});
const BURST = Number(values.burst);
const STEADY = Number(values['steady-rounds']);
const GAP = Number(values['steady-gap-ms']);
const WARM = 10;
const SETTLE_MS = 5_000;
const wtClient = values['wt-client'];
if (wtClient !== 'native' && wtClient !== 'chromium')
  throw new Error(`--wt-client ${wtClient}: want native or chromium`);
/** Sessions per native client process: each is a descriptor (its UDP socket) there. */
const wtPerProcess = Math.min(Number(values['wt-per-process']), openFilesLimit(process.pid) - 100);
const plan = values.plan.split(',').map((s) => {
  const [p, n, ch = '1'] = s.split(':');
  if (!['ws', 'sse', 'grpc', 'wt'].includes(p ?? '') || !(Number(n) > WARM) || !(Number(ch) >= 1))
    throw new Error(`bad plan entry '${s}' (want ws|sse|wt:<count > ${WARM}> or grpc:<count>[:<channels>])`);
  return { protocol: p as Protocol | 'wt', n: Number(n), channels: Number(ch) };
});

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const rows: Record<string, string | number>[] = [];
const firstOf = new Map<string, { rate: number; p99: number }>();
const notes: string[] = [];
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadAtStart = load();
const log = await openBenchLog('bench-edge-fanout-');

try {
  for (const { protocol, n: asked, channels } of plan) {
    const wt = protocol === 'wt';
    const prof = values['edge-cpu-prof'];
    const nodeFlags = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
    const node = wt ? undefined : await startNodeEdge(log, { gcHook: true, nodeFlags });
    const wtEdge = wt ? await startWtEdge(log) : undefined;
    const edge = (node ?? wtEdge) as NonNullable<typeof node | typeof wtEdge>;
    const label = wt ? 'webtransport' : protocol;
    const name =
      protocol === 'grpc'
        ? `grpc (${channels} conn)`
        : wt && wtClient === 'chromium'
          ? `${label} (chromium)`
          : label;
    let group: ClientGroup | undefined;
    try {
      const limit = openFilesLimit(edge.pid);
      // The WebTransport edge holds all sessions on one UDP socket: only its clients need descriptors.
      const n = wt ? asked : Math.min(asked, limit - procStats(edge.pid).fds - 100);
      if (n < asked)
        notes.push(`${label} ${asked}: capped at ${n} by the edge's open-files limit (${limit}, hard)`);
      if (wtEdge && wtClient === 'chromium')
        group = await browserClients(wtEdge, Number(values['wt-pages']), Number(values['wt-browsers']));
      else if (wtEdge)
        group = await nativeClients({
          quicPort: wtEdge.quicPort,
          httpPort: wtEdge.httpPort,
          processes: Math.ceil(n / wtPerProcess),
        });
      else if (node) {
        const port =
          protocol === 'ws' ? node.ports.ws : protocol === 'sse' ? node.ports.http : node.ports.grpc;
        group = processClients({
          protocol: protocol as Protocol,
          port,
          path: protocol === 'grpc' ? 'crash' : `/${protocol}/crash`,
          processes: Math.ceil(n / Number(values['per-process'])),
          grpcChannels: channels,
        });
      }
      if (!group) throw new Error('no client group');
      // Warm-up: a few subscribers and two rounds, so "before" includes warm code paths.
      await group.open(WARM);
      await group.reset(Date.now());
      await log.spaced(2, 100);
      await awaitDeliveries(group, WARM * 2, 10_000);
      await edge.gc();
      const before = procStats(edge.pid);
      const heap0 = await edge.metric('nodejs_heap_size_used_bytes');

      const opened = await group.open(n - WARM);
      if (opened.failed > 0)
        notes.push(`${label} ${n}: ${opened.failed} failed to open (${opened.firstError})`);
      const held = WARM + opened.opened;
      const seen = await edge.metric('edge_subscribers', { protocol: label });
      await sleep(SETTLE_MS);
      await edge.gc();
      const after = procStats(edge.pid);
      const perConn = ((after.rssKiB - before.rssKiB) * 1024) / opened.opened;
      const heapPerConn = ((await edge.metric('nodejs_heap_size_used_bytes')) - heap0) / opened.opened;
      console.error(`${label} ${held}: connected in ${fmt(opened.ms / 1000, 2)} s; edge sees ${seen}`);

      await group.reset(Date.now());
      const native = wtEdge && isNativeWt(group) ? group : undefined;
      let loss = native && wtEdge ? await probeWindow(native, wtEdge) : undefined;
      await log.spaced(STEADY, GAP);
      const steadyGot = await awaitDeliveries(group, held * STEADY, 60_000);
      if (steadyGot < held * STEADY) notes.push(`${name} ${held}: steady got ${steadyGot}/${held * STEADY}`);
      if (loss) notes.push(`${name} ${held} steady: ${await loss.done()}`);
      const steady = latencySummary((await group.stats()).latencies);

      await group.reset(Date.now());
      loss = native && wtEdge ? await probeWindow(native, wtEdge) : undefined;
      const { cpuS: cpu0, sysS: sys0 } = procStats(edge.pid);
      const clientCpu0 = cpuOf(group.pids);
      const t0 = wallNow();
      await log.burst(BURST);
      const got = await awaitDeliveries(group, held * BURST, 180_000);
      const s = await group.stats();
      const wall = s.count > 0 ? (s.last - t0) / 1000 : Number.NaN;
      const end = procStats(edge.pid);
      const edgeCpu = (end.cpuS - cpu0) / wall;
      const edgeSys = (end.sysS - sys0) / (end.cpuS - cpu0);
      const clientCpu = (cpuOf(group.pids) - clientCpu0) / wall;
      const rate = got / wall;
      const burst = latencySummary(s.latencies);
      if (loss) notes.push(`${name} ${held} burst: ${await loss.done()}`);
      const base = firstOf.get(label) ?? { rate, p99: steady.p99 };
      firstOf.set(label, base);
      rows.push({
        protocol: name,
        subs: held,
        'edge sees': seen,
        'connect s': fmt(opened.ms / 1000, 2),
        'RSS MiB before→after': `${fmt(before.rssKiB / 1024)}→${fmt(after.rssKiB / 1024)}`,
        'KiB/conn (JS heap)': `${fmt(perConn / 1024, 2)} (${heap0 ? fmt(heapPerConn / 1024, 2) : '-'})`,
        'steady p50/p99 ms': `${fmt(steady.p50)} / ${fmt(steady.p99)}`,
        'burst deliv/s': Math.round(rate),
        'burst p50/p99 ms': `${fmt(burst.p50, 0)} / ${fmt(burst.p99, 0)}`,
        'burst got/expected': `${got}/${held * BURST}`,
        'edge CPU (kernel part)': `${fmt(edgeCpu * 100, 0)}% (${fmt(edgeSys * 100, 0)}%)`,
        'edge CPU µs/deliv': fmt(((end.cpuS - cpu0) * 1e6) / got),
        'client CPU': `${fmt(clientCpu * 100, 0)}%`,
        'rate, steady p99 vs first level': `${fmt(rate / base.rate, 2)}×, ${fmt(steady.p99 / base.p99, 2)}×`,
      });
      console.error(JSON.stringify(rows[rows.length - 1]));
    } finally {
      await group?.close();
      await edge.stop();
    }
  }
} finally {
  await log.close();
}

report(
  `fan-out on one edge process: crash subscribers; steady = ${STEADY} rounds ${GAP} ms apart; burst = ${BURST} rounds in one append (targets: 20k held, p99 < 100 ms, < 10 KiB per idle WebSocket)`,
  rows,
);
for (const note of notes) console.log(`note: ${note}`);
console.log(`load average at start: ${loadAtStart}; at end: ${load()} (2 cores)`);
