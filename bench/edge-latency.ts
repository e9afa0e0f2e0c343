/**
 * Edge latency benchmark: time from a round's append to the log until a subscriber
 * receives it, per protocol, with `--subscribers` (1,000) subscribers of `crash` at once, one
 * protocol at a time, over `--rounds` rounds appended `--gap-ms` apart. Latency of a delivery =
 * receive wall time − the message's `timestamp` (the Kafka record time the producer set just
 * before the append; both clocks are this machine's). Target: p99 < 50 ms.
 *
 * Processes: the Node edge (services/edge/main.ts; WebSocket, SSE, gRPC) or the Deno WebTransport
 * edge; the subscribers in `--client-processes` client processes of their own
 * (bench/edge-clients.ts; raw `net` WebSocket/SSE clients, gRPC streams over `--grpc-channels`
 * HTTP/2 connections per process) or, for WebTransport, as many Deno processes of Deno's own
 * WebTransport client (bench/edge-wt-native.ts; `--wt-client chromium`: headless Chromium pages
 * instead, bench/edge-wt.ts); this process only appends. For native WebTransport clients a note
 * says how many datagrams were missed and where they can have gone. Baseline in the same run: one
 * subscriber of the same protocol (the path itself, without fan-out). Per round it also reports
 * the first receiver's latency and the span to the last receiver (the fan-out's own cost), and the
 * CPU of the edge and of the clients (% of one core).
 *
 * Usage: tsx bench/edge-latency.ts [--subscribers 1000] [--rounds 100] [--gap-ms 100]
 *          [--protocols ws,sse,grpc,wt] [--client-processes 2] [--grpc-channels 1]
 *          [--wt-client native|chromium] [--wt-pages 4] [--wt-browsers 2]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Protocol } from './edge-clients.ts';
import { type BenchLog, cpuOf, openBenchLog, procStats, startNodeEdge } from './edge-harness.ts';
import { awaitDeliveries, type ClientGroup, perRound, processClients } from './edge-pool.ts';
import { browserClients, startWtEdge } from './edge-wt.ts';
import { isNativeWt, nativeClients, type ProbedEdge, probeWindow } from './edge-wt-native.ts';
import { latencySummary, report } from './lib.ts';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '100' },
    'gap-ms': { type: 'string', default: '100' },
    protocols: { type: 'string', default: 'ws,sse,grpc,wt' },
    'grpc-channels': { type: 'string', default: '1' },
    'wt-client': { type: 'string', default: 'native' },
    'wt-pages': { type: 'string', default: '4' },
    'wt-browsers': { type: 'string', default: '2' },
    'client-processes': { type: 'string', default: '2' },
  },
});
const N = Number(values.subscribers);
const ROUNDS = Number(values.rounds);
const GAP = Number(values['gap-ms']);
const protocols = values.protocols.split(',');
const WARM_UP_ROUNDS = 3;
const wtClient = values['wt-client'];
if (wtClient !== 'native' && wtClient !== 'chromium')
  throw new Error(`--wt-client ${wtClient}: want native or chromium`);
const notes: string[] = [];

interface Row {
  protocol: string;
  subscribers: number;
  'delivered / expected': string;
  'p50 ms': string;
  'p99 ms': string;
  'max ms': string;
  'p99 vs 1 sub': string;
  'first rcv p50': string;
  'span p50/p99': string;
  'edge CPU %': string;
  'client CPU %': string;
}

/**
 * Opens `n` subscribers in a fresh group, warms up, measures ROUNDS spaced rounds, closes. With
 * `probed` (the WebTransport edge) and native clients, a note says where datagrams went missing.
 */
async function measure(
  log: BenchLog,
  label: string,
  n: number,
  make: (n: number) => Promise<ClientGroup>,
  edgePid: number,
  baselineP99?: number,
  probed?: ProbedEdge,
): Promise<Row & { p99: number }> {
  const group = await make(n);
  try {
    const opened = await group.open(n);
    if (opened.failed > 0) console.error(`${label}: ${opened.failed} of ${n} failed: ${opened.firstError}`);
    const held = opened.opened;
    await group.reset(Date.now());
    await log.spaced(WARM_UP_ROUNDS, GAP);
    await awaitDeliveries(group, held * WARM_UP_ROUNDS, 15_000);
    await group.reset(Date.now());
    const loss = probed && isNativeWt(group) ? await probeWindow(group, probed) : undefined;
    const cpu0 = procStats(edgePid).cpuS;
    const clientCpu0 = cpuOf(group.pids);
    const t0 = performance.now();
    await log.spaced(ROUNDS, GAP);
    await awaitDeliveries(group, held * ROUNDS, 15_000);
    const wall = (performance.now() - t0) / 1000;
    const cpuPct = ((procStats(edgePid).cpuS - cpu0) / wall) * 100;
    const clientPct = ((cpuOf(group.pids) - clientCpu0) / wall) * 100;
    const s = await group.stats();
    const { p50, p99, max } = latencySummary(s.latencies);
    const rounds = perRound(s);
    if (loss) notes.push(`${label} × ${held}: ${await loss.done()}`);
    console.error(`${label} × ${held}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    return {
      protocol: label,
      subscribers: held,
      'delivered / expected': `${s.count} / ${held * ROUNDS}`,
      'p50 ms': p50.toFixed(1),
      'p99 ms': p99.toFixed(1),
      'max ms': max.toFixed(1),
      'p99 vs 1 sub': baselineP99 ? `${(p99 / baselineP99).toFixed(2)}×` : 'baseline',
      'first rcv p50': rounds.firstP50.toFixed(1),
      'span p50/p99': `${rounds.spanP50.toFixed(1)} / ${rounds.spanP99.toFixed(1)}`,
      'edge CPU %': cpuPct.toFixed(0),
      'client CPU %': clientPct.toFixed(0),
      p99,
    };
  } finally {
    await group.close();
  }
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadAtStart = load();
const log = await openBenchLog('bench-edge-latency-');
const rows: Row[] = [];
try {
  const node = protocols.filter((p) => p !== 'wt') as Protocol[];
  if (node.length > 0) {
    const edge = await startNodeEdge(log);
    try {
      for (const protocol of node) {
        const port =
          protocol === 'ws' ? edge.ports.ws : protocol === 'sse' ? edge.ports.http : edge.ports.grpc;
        const path = protocol === 'grpc' ? 'crash' : `/${protocol}/crash`;
        const make = async (n: number) =>
          processClients({
            protocol,
            port,
            path,
            processes: Math.min(n, Number(values['client-processes'])),
            grpcChannels: Number(values['grpc-channels']),
          });
        const base = await measure(log, protocol, 1, make, edge.pid);
        const full = await measure(log, protocol, N, make, edge.pid, base.p99);
        rows.push(base, full);
      }
    } finally {
      await edge.stop();
    }
  }
  if (protocols.includes('wt')) {
    const edge = await startWtEdge(log);
    try {
      const make = (n: number) =>
        wtClient === 'chromium'
          ? browserClients(edge, Number(values['wt-pages']), Number(values['wt-browsers']))
          : nativeClients({
              quicPort: edge.quicPort,
              httpPort: edge.httpPort,
              processes: Math.min(n, Number(values['client-processes'])),
            });
      const label = wtClient === 'chromium' ? 'webtransport (chromium)' : 'webtransport';
      const base = await measure(log, label, 1, make, edge.pid, undefined, edge);
      const full = await measure(log, label, N, make, edge.pid, base.p99, edge);
      rows.push(base, full);
    } finally {
      await edge.stop();
    }
  }
} finally {
  await log.close();
}

report(
  `append → receive latency, ${ROUNDS} crash rounds ${GAP} ms apart, one protocol at a time (target p99 < 50 ms)`,
  rows.map(({ p99: _p99, ...r }: Row & { p99?: number }) => r),
);
for (const note of notes) console.log(`note: ${note}`);
console.log(`load average at start: ${loadAtStart}; at end: ${load()} (2 cores)`);
