/**
 * Catch-up benchmark: how fast subscribers resuming from the start of the log
 * are replayed, and what that does to live subscribers of the same edge.
 *
 * 1. Backlog: `--rounds` (100,000) crash rounds appended to a fresh `rounds` topic.
 * 2. Catch-up alone: one WebSocket subscriber with `?since=t=0` (every round of the log), then
 *    `--catch-up` (100) at once: rounds a second per subscriber and in total, over the time until
 *    all are replayed or `--window-s` (60 s) passes.
 * 3. Live alone: `--live` (1,000) WebSocket subscribers of crash, `--live-rounds` (100) rounds
 *    `--gap-ms` (100 ms) apart: append → receive latency p50/p99.
 * 4. Live while `--catch-up` subscribers replay from offset 0: the same measurement. Target: the
 *    live p99 moves by less than 20 %.
 *
 * Processes: the Node edge (services/edge/main.ts) with STREAM_CATCHUP_RATE / _TOTAL_RATE /
 * _SLICE_MS from `--rate` (5000), `--total-rate` (50000), `--slice-ms` (1); subscribers in client
 * processes of their own (bench/edge-clients.ts: raw WebSocket clients), live and catch-up apart.
 *
 * Usage: tsx bench/stream-catch-up.ts [--rounds 100000] [--catch-up 100] [--live 1000]
 *          [--live-rounds 100] [--gap-ms 100] [--rate 5000] [--total-rate 50000] [--slice-ms 1]
 *          [--window-s 60] [--client-processes 2]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { type BenchLog, cpuOf, openBenchLog, procStats, sleep, startNodeEdge } from './edge-harness.ts';
import { awaitDeliveries, type ClientGroup, perRound, processClients } from './edge-pool.ts';
import { latencySummary, report, writeResults } from './lib.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '100000' },
    'catch-up': { type: 'string', default: '100' },
    live: { type: 'string', default: '1000' },
    'live-rounds': { type: 'string', default: '100' },
    'gap-ms': { type: 'string', default: '100' },
    rate: { type: 'string', default: '5000' },
    'total-rate': { type: 'string', default: '50000' },
    'slice-ms': { type: 'string', default: '1' },
    'window-s': { type: 'string', default: '60' },
    'client-processes': { type: 'string', default: '2' },
  },
});
const ROUNDS = Number(values.rounds);
const CATCH_UP = Number(values['catch-up']);
const LIVE = Number(values.live);
const LIVE_ROUNDS = Number(values['live-rounds']);
const GAP = Number(values['gap-ms']);
const WINDOW_MS = Number(values['window-s']) * 1000;
const PROCS = Number(values['client-processes']);
const FROM_START = `/ws/crash?since=${encodeURIComponent('t=0')}`;

/** Appends the backlog in batches (one send each). */
async function backlog(log: BenchLog): Promise<void> {
  const t0 = performance.now();
  for (let left = ROUNDS; left > 0; left -= 2000) await log.burst(Math.min(2000, left));
  console.error(`backlog: ${ROUNDS} rounds appended in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

interface CatchUpFigures {
  subscribers: number;
  replayed: number;
  seconds: number;
  perSubscriber: number;
  total: number;
  complete: boolean;
}

/** Opens `n` subscribers replaying from offset 0 and measures until all are done or the window ends. */
async function catchUp(group: ClientGroup, n: number): Promise<CatchUpFigures> {
  await group.reset(0); // count replayed rounds too, whatever their timestamp
  const t0 = performance.now();
  const opened = await group.open(n);
  if (opened.failed > 0) console.error(`catch-up: ${opened.failed} of ${n} failed: ${opened.firstError}`);
  const want = opened.opened * ROUNDS;
  const got = await awaitDeliveries(group, want, WINDOW_MS);
  const seconds = (performance.now() - t0) / 1000;
  const total = got / seconds;
  return {
    subscribers: opened.opened,
    replayed: got,
    seconds,
    perSubscriber: total / opened.opened,
    total,
    complete: got >= want,
  };
}

/** Live latency of `group` (already open) over LIVE_ROUNDS spaced rounds. */
async function live(log: BenchLog, group: ClientGroup, held: number, edgePid: number) {
  await group.reset(Date.now());
  await log.spaced(3, GAP);
  await awaitDeliveries(group, held * 3, 15_000);
  await group.reset(Date.now());
  const cpu0 = procStats(edgePid).cpuS;
  const t0 = performance.now();
  await log.spaced(LIVE_ROUNDS, GAP);
  await awaitDeliveries(group, held * LIVE_ROUNDS, 15_000);
  const wall = (performance.now() - t0) / 1000;
  const s = await group.stats();
  return {
    delivered: `${s.count} / ${held * LIVE_ROUNDS}`,
    ...latencySummary(s.latencies),
    // Per round: its first receiver (the edge's own delay plus one client) and the spread to the last.
    ...perRound(s),
    edgeCpuPct: ((procStats(edgePid).cpuS - cpu0) / wall) * 100,
  };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadAtStart = load();
const log = await openBenchLog('bench-catch-up-');
const results: Record<string, unknown> = {};
try {
  await backlog(log);
  const edge = await startNodeEdge(log, {
    env: {
      STREAM_CATCHUP_RATE: values.rate,
      STREAM_CATCHUP_TOTAL_RATE: values['total-rate'],
      STREAM_CATCHUP_SLICE_MS: values['slice-ms'],
    },
  });
  const group = (processes: number) =>
    processClients({ protocol: 'ws', port: edge.ports.ws, path: FROM_START, processes });
  try {
    const one = group(1);
    const single = await catchUp(one, 1);
    await one.close();
    const many = group(PROCS);
    const crowd = await catchUp(many, CATCH_UP);
    await many.close();
    results.catchUp = { single, crowd };
    report(
      `catch-up from offset 0 of ${ROUNDS} rounds (rate ${values.rate}/s per subscriber, ${values['total-rate']}/s per edge)`,
      [single, crowd].map((f) => ({
        subscribers: f.subscribers,
        'rounds replayed': f.replayed,
        seconds: f.seconds.toFixed(1),
        'rounds/s per subscriber': f.perSubscriber.toFixed(0),
        'rounds/s total': f.total.toFixed(0),
        complete: f.complete ? 'yes' : `no (window ${values['window-s']} s)`,
      })),
    );

    const liveGroup = processClients({
      protocol: 'ws',
      port: edge.ports.ws,
      path: '/ws/crash',
      processes: PROCS,
    });
    const opened = await liveGroup.open(LIVE);
    const alone = await live(log, liveGroup, opened.opened, edge.pid);
    const catching = group(PROCS);
    const clientsCpu0 = cpuOf(catching.pids);
    await catching.reset(0);
    await catching.open(CATCH_UP);
    await sleep(1000); // the catch-ups are under way
    const before = await catching.count();
    const during = await live(log, liveGroup, opened.opened, edge.pid);
    const replayedMeanwhile = (await catching.count()) - before;
    await catching.close();
    await liveGroup.close();
    results.live = {
      alone,
      during,
      replayedMeanwhile,
      catchUpClientCpuS: cpuOf(catching.pids) - clientsCpu0,
    };
    const change = during.p99 / alone.p99 - 1;
    report(
      `live latency of ${opened.opened} subscribers, ${LIVE_ROUNDS} rounds ${GAP} ms apart (target: p99 moves < 20 %)`,
      [
        {
          case: 'alone',
          delivered: alone.delivered,
          'p50 ms': alone.p50.toFixed(1),
          'p99 ms': alone.p99.toFixed(1),
          'max ms': alone.max.toFixed(1),
          'first rcv p50': alone.firstP50.toFixed(1),
          'span p50/p99': `${alone.spanP50.toFixed(1)} / ${alone.spanP99.toFixed(1)}`,
          'edge CPU %': alone.edgeCpuPct.toFixed(0),
          'p99 change': '',
        },
        {
          case: `${CATCH_UP} catching up (${replayedMeanwhile} replayed meanwhile)`,
          delivered: during.delivered,
          'p50 ms': during.p50.toFixed(1),
          'p99 ms': during.p99.toFixed(1),
          'max ms': during.max.toFixed(1),
          'first rcv p50': during.firstP50.toFixed(1),
          'span p50/p99': `${during.spanP50.toFixed(1)} / ${during.spanP99.toFixed(1)}`,
          'edge CPU %': during.edgeCpuPct.toFixed(0),
          'p99 change': `${(change * 100).toFixed(0)} %`,
        },
      ],
    );
  } finally {
    await edge.stop();
  }
} finally {
  await log.close();
}
console.log(`load average at start: ${loadAtStart}; at end: ${load()}`);
console.log(`results: ${writeResults('stream-catch-up', { options: values, ...results })}`);
