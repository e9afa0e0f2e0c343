/**
 * The lifecycle benchmarks (`npm run bench -- lifecycle`): crash rounds of a real round engine, every
 * piece a child process on loopback in a topic namespace of its own (lifecycle-stack.ts).
 *
 * 1. Cash-out (lifecycle-cash-out.ts): engine + API. Demo players (their sessions call no operator,
 *    so what is measured is the cash-out path: API checks and claim, the engine's signed decision,
 *    its BetCashedOut appended) bet in each betting window and cash out during the flight at
 *    `--rate` a second. Request → answer, → the engine's decision, → the decision on the log
 *    (LogAppendTime), p50/p99, beside two baselines measured at the same pace in the same run: an
 *    authenticated player route (GET /play/round: the same session lookup and one query) and the
 *    engine's GET /health (the loopback HTTP floor); both also at a tenth of the pace during the
 *    measured flights, so a stall of the shared machine shows in the baseline too.
 * 2. Watchers (lifecycle-watch.ts): engine + edge. `--watchers` WebSocket subscribers of crash
 *    with `envelope=1&lifecycle=1`: the delay of each round-opened, betting-closed (the flight's
 *    start) and round (its end) from its append time and from the event's own time, p50/p99, and
 *    the edge's CPU-seconds per delivery; baseline the same number of plain subscribers (finished
 *    rounds only) over an equal window, and the edge's idle CPU (windows before and after).
 *
 * Load generators run on the same machine as the servers and share its cores (printed beside the
 * figures). Prints tables, writes bench/results/lifecycle-<time>.json; asserts nothing.
 *
 * Usage: tsx bench/lifecycle.ts [--parts cash-out,watch] [--rate 100] [--cash-outs 2000]
 *   [--max-s 120] [--bets 1000] [--players 50] [--speed 1] [--betting-ms 15000] [--baseline-s 10]
 *   [--start-delay-ms 100] [--warm-up-flights 1] [--probe-every 10] [--watchers 1000] [--watch-s 30] [--idle-s 15] [--watch-speed 10]
 *   [--client-processes 2]
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { writeResults } from './lib.ts';
import { runCashOuts } from './lifecycle-cash-out.ts';
import { cashOutTables, watchTables } from './lifecycle-report.ts';
import { bearer, demoPlayers, pacedGets } from './lifecycle-requests.ts';
import { startLifecycleStack } from './lifecycle-stack.ts';
import { runWatch } from './lifecycle-watch.ts';

const { values } = parseArgs({
  options: {
    parts: { type: 'string', default: 'cash-out,watch' },
    rate: { type: 'string', default: '100' },
    'cash-outs': { type: 'string', default: '2000' },
    'max-s': { type: 'string', default: '120' },
    bets: { type: 'string', default: '1000' },
    players: { type: 'string', default: '50' },
    speed: { type: 'string', default: '1' },
    'betting-ms': { type: 'string', default: '15000' },
    'baseline-s': { type: 'string', default: '10' },
    'start-delay-ms': { type: 'string', default: '100' },
    'warm-up-flights': { type: 'string', default: '1' },
    'probe-every': { type: 'string', default: '10' },
    watchers: { type: 'string', default: '1000' },
    'watch-s': { type: 'string', default: '30' },
    'idle-s': { type: 'string', default: '15' },
    'watch-speed': { type: 'string', default: '10' },
    'client-processes': { type: 'string', default: '2' },
  },
});
const num = (name: keyof typeof values, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return n;
};
const parts = values.parts.split(',');
for (const p of parts)
  if (p !== 'cash-out' && p !== 'watch') throw new Error(`--parts: unknown part '${p}' (cash-out, watch)`);
const rate = num('rate', 1, 5000);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const machine = `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`;
const loadAtStart = load();
console.log(`node ${process.version}, ${machine}, load average ${loadAtStart}`);

const results: Record<string, unknown> = { options: values };
if (parts.includes('cash-out')) {
  const speed = num('speed', 0.1, 1000);
  const bettingMs = num('betting-ms', 1000, 600_000);
  const stack = await startLifecycleStack({ part: 'cash-out', speed, bettingMs, with: 'api' });
  try {
    const players = await demoPlayers(stack.apiUrl, stack.adminKey, num('players', 1, 10_000));
    const baselineS = num('baseline-s', 1, 600);
    const [first] = players;
    if (!first) throw new Error('no player');
    const round = await pacedGets(`${stack.apiUrl}/play/round`, bearer(first), rate, baselineS);
    const health = await pacedGets(`${stack.engineUrl}/health`, {}, rate, baselineS);
    const run = await runCashOuts(stack, players, {
      ratePerS: rate,
      betsPerRound: num('bets', 1, 100_000),
      betConcurrency: 16,
      startDelayMs: num('start-delay-ms', 0, 10_000),
      warmUpFlights: num('warm-up-flights', 0, 100),
      probeEvery: num('probe-every', 0, 1_000_000),
      target: num('cash-outs', 1),
      maxMs: num('max-s', 1) * 1000,
    });
    results.cashOut = cashOutTables({ rate, speed, bettingMs, baselines: { round, health }, run });
  } catch (err) {
    console.error(`cash-out part failed: ${(err as Error).message}\n${stack.logs()}`);
    process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}
if (parts.includes('watch')) {
  const speed = num('watch-speed', 0.1, 1000);
  const stack = await startLifecycleStack({ part: 'watch', speed, bettingMs: 7000, with: 'edge' });
  try {
    const o = {
      watchers: num('watchers', 1, 100_000),
      seconds: num('watch-s', 1, 3600),
      idleSeconds: num('idle-s', 1, 3600),
      clientProcesses: num('client-processes', 1, 64),
    };
    results.watch = watchTables({ speed, ...o }, await runWatch(stack, o));
  } catch (err) {
    console.error(`watch part failed: ${(err as Error).message}\n${stack.logs()}`);
    process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}
const loadAtEnd = load();
console.log(
  `\nmachine: ${machine}; load average at start ${loadAtStart}, at end ${loadAtEnd}. The load generators ` +
    '(players, watchers) and this process share these cores with the servers measured.',
);
console.log(`results: ${writeResults('lifecycle', { ...results, loadAtStart, loadAtEnd })}`);
