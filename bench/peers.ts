/**
 * `npm run bench -- peers`: our edge beside Centrifugo (and, on request, the Node 20
 * edge of before, Bun's server and `ws`: bench/peers-servers.ts), on the same Kafka topic, driven
 * by the same load generator (bench/edge-pool.ts client processes, raw WebSocket clients of
 * bench/edge-wire.ts) on the same 2 cores, one server at a time, at each level of subscribers:
 *
 * - connect: wall time to open the level's subscribers (handshake, and for Centrifugo its connect
 *   and subscribe replies are not waited for: its first pushes prove them);
 * - RSS per connection: the server's VmRSS with all subscribers open and 3 s idle, minus with
 *   `WARM` open, over the added subscribers;
 * - steady: `--rate` rounds/s for `--seconds` s; latency append → client p50/p99/max, delivered
 *   vs expected, server CPU-seconds and the kernel's share of them (/proc/<pid>/stat stime);
 * - burst: `--burst` rounds in one append; deliveries/s = deliveries / (last receive − append
 *   start), server CPU-seconds;
 * - ratios: each server's figures over the edge's (the first server) at the same level.
 *
 * Every round is appended twice on the topic, same key: the Avro record the edge reads and its
 * stream-form JSON with Centrifugo's channel header (bench/edge-harness.ts jsonTwin); each server
 * skips the other's. Latency is measured from the record's `timestamp`: the broker's append time
 * for the edge (LogAppendTime), the time the JSON was made, just before the send, for Centrifugo
 * (its figure includes the produce round trip, ≈1 ms here).
 *
 * Loads target only 127.0.0.1, are bounded in count and time, and stop by themselves.
 * Usage: tsx bench/peers.ts [--servers edge,centrifugo] [--levels 1000,10000,20000] [--rate 10]
 *          [--seconds 30] [--burst 50] [--per-process 5000]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { topicName } from '../lib/log/topics.ts';
import { openBenchLog, openFilesLimit, procStats, sleep } from './edge-harness.ts';
import { awaitDeliveries, type ClientGroup, processClients } from './edge-pool.ts';
import { wallNow } from './edge-wire.ts';
import { latencySummary, report, writeResults } from './lib.ts';
import {
  CENTRIFUGO_HEADER,
  isPeerName,
  PEERS,
  type PeerName,
  type PeerServer,
  startPeer,
} from './peers-servers.ts';

const { values } = parseArgs({
  options: {
    servers: { type: 'string', default: 'edge,centrifugo' },
    levels: { type: 'string', default: '1000,10000,20000' },
    rate: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '30' },
    burst: { type: 'string', default: '50' },
    'per-process': { type: 'string', default: '5000' },
  },
});
const servers = values.servers.split(',') as PeerName[];
for (const s of servers)
  if (!isPeerName(s))
    throw new Error(
      `unknown server '${s}' (${PEERS.join('|')}|edge-x<N>|edge-t<N>|edge-s<MB>|edge@<revision>)`,
    );
const levels = values.levels.split(',').map(Number);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const BURST = Number(values.burst);
const WARM = 10;
const STEADY = Math.round(RATE * SECONDS);
if (!(STEADY > 0 && BURST > 0 && levels.every((n) => n > WARM)))
  throw new Error('want --rate × --seconds > 0, --burst > 0, levels above 10');

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadAtStart = load();
const log = await openBenchLog('bench-peers-', { jsonTwin: { header: CENTRIFUGO_HEADER, channel: 'crash' } });
const topic = topicName(log.config, 'rounds');

interface Figures {
  server: PeerName;
  subs: number;
  connectS: number;
  kibPerConn: number;
  steady: { p50: number; p99: number; max: number };
  delivered: number;
  expected: number;
  steadyCpuS: number;
  /** Of steadyCpuS, seconds in the kernel (/proc/<pid>/stat stime). */
  steadySysS: number;
  burstRate: number;
  burstGot: number;
  burstCpuS: number;
}

/** /proc figures of a server: the sums over its processes. */
function statsOf(server: PeerServer) {
  const all = server.pids.map(procStats);
  const sum = (f: (s: (typeof all)[number]) => number) => all.reduce((t, s) => t + f(s), 0);
  return { rssKiB: sum((s) => s.rssKiB), cpuS: sum((s) => s.cpuS), sysS: sum((s) => s.sysS) };
}

/** One server at one level: see the module comment. */
async function measure(name: PeerName, asked: number): Promise<Figures> {
  const server: PeerServer = await startPeer(name, log, topic);
  let group: ClientGroup | undefined;
  try {
    const room = server.pids.reduce((t, p) => t + openFilesLimit(p) - procStats(p).fds - 100, 0);
    const n = Math.min(asked, room);
    if (n < asked) console.error(`${name} ${asked}: capped at ${n} by its open-files limit`);
    group = processClients({
      protocol: 'ws',
      port: server.port,
      path: server.path,
      processes: Math.ceil(n / Number(values['per-process'])),
      ...(server.ws ? { ws: server.ws } : {}),
    });
    await group.open(WARM);
    await group.reset(Date.now());
    await log.spaced(2, 100);
    await awaitDeliveries(group, WARM * 2, 10_000);
    const before = statsOf(server);
    const opened = await group.open(n - WARM);
    if (opened.failed > 0) console.error(`${name} ${n}: ${opened.failed} failed (${opened.firstError})`);
    const held = WARM + opened.opened;
    await sleep(3_000);
    const after = statsOf(server);

    await group.reset(Date.now());
    const s0 = statsOf(server);
    await log.spaced(STEADY, 1000 / RATE);
    const delivered = await awaitDeliveries(group, held * STEADY, 30_000);
    const s1 = statsOf(server);
    const steadyCpuS = s1.cpuS - s0.cpuS;
    const steady = latencySummary((await group.stats()).latencies);

    await group.reset(Date.now());
    const b0 = statsOf(server).cpuS;
    const t0 = wallNow();
    await log.burst(BURST);
    const burstGot = await awaitDeliveries(group, held * BURST, 120_000);
    const st = await group.stats();
    const burstCpuS = statsOf(server).cpuS - b0;
    const wall = st.count > 0 ? (st.last - t0) / 1000 : Number.NaN;
    console.error(`${name} ${held}: connect ${fmt(opened.ms / 1000, 2)} s, steady p99 ${fmt(steady.p99)} ms`);
    return {
      server: name,
      subs: held,
      connectS: opened.ms / 1000,
      kibPerConn: (after.rssKiB - before.rssKiB) / opened.opened,
      steady,
      delivered,
      expected: held * STEADY,
      steadyCpuS,
      steadySysS: s1.sysS - s0.sysS,
      burstRate: burstGot / wall,
      burstGot,
      burstCpuS,
    };
  } finally {
    await group?.close();
    await server.stop();
  }
}

const all: Figures[] = [];
try {
  for (const level of levels) {
    for (const name of servers) all.push(await measure(name, level));
  }
} finally {
  await log.close();
}

const ratio = (a: number, b: number) => fmt(a / b, 2);
for (const level of levels) {
  const rows = all.filter((f) => f.subs > 0 && levels.indexOf(level) === levels.indexOf(levelOf(f)));
  const base = rows[0];
  if (!base) continue;
  report(
    `${level} subscribers of crash: steady ${RATE} rounds/s for ${SECONDS} s, then a burst of ${BURST} (one server at a time; clients and Kafka on the same cores)`,
    rows.map((f) => ({
      server: f.server,
      subs: f.subs,
      'connect s': fmt(f.connectS, 2),
      'steady p50/p99/max ms': `${fmt(f.steady.p50)} / ${fmt(f.steady.p99)} / ${fmt(f.steady.max)}`,
      'delivered/expected': `${f.delivered}/${f.expected}`,
      'steady CPU s': fmt(f.steadyCpuS, 2),
      'µs CPU/delivery': fmt((f.steadyCpuS * 1e6) / f.delivered, 2),
      'kernel %': fmt((100 * f.steadySysS) / f.steadyCpuS, 0),
      'burst deliv/s': Math.round(f.burstRate),
      'burst CPU s': fmt(f.burstCpuS, 2),
      'KiB/conn': fmt(f.kibPerConn, 2),
    })),
  );
  report(
    `${level}: ratios to ${base.server} (deliveries per CPU-second: above 1 = better than ${base.server}; latency, memory, connect: below 1 = better)`,
    rows.slice(1).map((f) => ({
      server: f.server,
      'deliveries per CPU-s': ratio(f.delivered / f.steadyCpuS, base.delivered / base.steadyCpuS),
      'steady p99': ratio(f.steady.p99, base.steady.p99),
      'burst deliv/s': ratio(f.burstRate, base.burstRate),
      'KiB/conn': ratio(f.kibPerConn, base.kibPerConn),
      connect: ratio(f.connectS, base.connectS),
    })),
  );
}

function levelOf(f: Figures): number {
  // A level capped by a server's open-files limit still belongs to the level asked for.
  return levels.reduce((best, l) => (Math.abs(l - f.subs) < Math.abs(best - f.subs) ? l : best));
}

const file = writeResults('peers', {
  servers,
  levels,
  rate: RATE,
  seconds: SECONDS,
  burst: BURST,
  figures: all,
});
console.log(`load average at start: ${loadAtStart}; at end: ${load()} (2 cores); results: ${file}`);
