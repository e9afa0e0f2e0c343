/**
 * Wallet benchmark (issue 5 "Benchmarks"): end-to-end bets settled per second against the operator
 * sandbox (bet callback, settlement against the RoundFinished, win callback) with p50/p99 from the
 * bet's placement to its win credit acknowledgement, beside the sandbox's raw callback rate
 * measured in the same run (wallet-raw.ts); then the same end to end with a share of every
 * callback failing transiently (sandbox fault `error500` with that probability; the operator row's
 * retry policy is short so retried wins finish within the run; a failed debit is compensated, not
 * retried, so those bets end rejected and refunded). Every service is a real child process on
 * loopback in its own namespace (wallet-stack.ts). Prints tables and ratios, writes
 * bench/results/wallet-<time>.json; asserts nothing.
 *
 * Usage: tsx bench/wallet.ts [--players 20] [--bets 25] [--game wall-street] [--speed 20]
 *          [--concurrency 32] [--raw-seconds 5] [--fault-rate 0.05] [--drain-s 120] [--pause-ms 0]
 * --bets is per player, placed back to back unless --pause-ms spaces them (0 measures the
 * pipeline saturated, so latencies include the queue it builds); --speed is ROUND_SPEED
 * (wall-street rounds last 10 s / speed).
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { GAME_SLUGS } from '../rules/games/catalog.ts';
import { setFaults } from '../tests/support/wallet-players.ts';
import { report, writeResults } from './lib.ts';
import { type E2eOptions, type E2eResult, runPlayers, startCollector } from './wallet-e2e.ts';
import { benchRawCallbacks } from './wallet-raw.ts';
import { startWalletStack } from './wallet-stack.ts';
import { BetTracker } from './wallet-track.ts';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '20' },
    bets: { type: 'string', default: '25' },
    game: { type: 'string', default: 'wall-street' },
    speed: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'raw-seconds': { type: 'string', default: '5' },
    'fault-rate': { type: 'string', default: '0.05' },
    'drain-s': { type: 'string', default: '120' },
    'pause-ms': { type: 'string', default: '0' },
  },
});
const num = (name: keyof typeof values, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return n;
};
const game = values.game as E2eOptions['game'];
if (!(GAME_SLUGS as readonly string[]).includes(game))
  throw new Error(`--game must be one of ${GAME_SLUGS.join(', ')} (got '${values.game}')`);
const players = num('players', 1, 1000);
const betsPerPlayer = num('bets', 1, 100_000);
const speed = num('speed', 0.1, 1000);
const faultRate = num('fault-rate', 0, 1);
const drainTimeoutMs = num('drain-s', 1) * 1000;
const retryPolicy = { retries: 10, minTimeoutMs: 20, maxTimeoutMs: 200, factor: 2 };
const timeoutMs = 5000;

console.log(
  `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const stack = await startWalletStack({ game, speed, retryPolicy, timeoutMs });
const tracker = new BetTracker();
const collector = await startCollector(stack, tracker);
try {
  const raw = await benchRawCallbacks({
    sandboxUrl: stack.sandboxUrl,
    secret: stack.sandboxSecret,
    concurrency: num('concurrency', 1, 10_000),
    seconds: num('raw-seconds', 0.5),
    timeoutMs,
  });
  const base = { game, players, betsPerPlayer, pauseMs: num('pause-ms', 0), drainTimeoutMs };
  const clean = await runPlayers(stack, tracker, { ...base, label: 'clean' });
  await setFaults(stack.sandboxUrl, [{ mode: 'error500', probability: faultRate }]);
  const faulty = await runPlayers(stack, tracker, { ...base, label: 'faults' });
  await setFaults(stack.sandboxUrl, []);

  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
  report(`Baseline: signed bet+win callback pairs straight to the sandbox, ${raw.elapsedMs.toFixed(0)} ms`, [
    {
      concurrency: num('concurrency', 1),
      requests: raw.requests,
      'requests/s': f1(raw.requestsPerS),
      'pairs/s': f1(raw.pairsPerS),
      'request p50 ms': f1(raw.requestP50Ms),
      'request p99 ms': f1(raw.requestP99Ms),
      errors: raw.errors,
    },
  ]);
  if (raw.firstError) console.log(`first baseline error: ${raw.firstError}`);
  const scenarios: [string, E2eResult][] = [
    ['no faults', clean],
    [`${(faultRate * 100).toFixed(0)}% callbacks fail (500)`, faulty],
  ];
  report(
    `End to end: ${players} players × ${betsPerPlayer} bets on ${game} (ROUND_SPEED ${speed}), API → saga → sandbox → settlement → saga`,
    scenarios.map(([name, r]) => ({
      scenario: name,
      placed: r.placed,
      settled: r.settled,
      won: r.won,
      lost: r.lost,
      'rejected (refunded)': r.rejected,
      'cancelled (round closed)': r.cancelled,
      'wins retried': r.winsRetried,
      'wins parked': r.winsParked,
      unfinished: r.unfinished,
      'placed/s': f1(r.placedPerS),
      'settled/s': f1(r.settledPerS),
      'callbacks acked/s': f1(r.callbacksPerS),
    })),
  );
  report(
    'End-to-end latency, ms (from just before POST /play/bets; event times are the appenders’ clocks, same host)',
    scenarios.flatMap(([name, r]) =>
      Object.entries(r.latency).map(([what, l]) => ({
        scenario: name,
        what,
        n: l.n,
        p50: f1(l.p50),
        p99: f1(l.p99),
        max: f1(l.max),
      })),
    ),
  );
  for (const [name, r] of scenarios) {
    if (r.placementErrors > 0)
      console.log(`${name}: ${r.placementErrors} placements failed, first: ${r.firstPlacementError}`);
  }
  const ratios = {
    cleanSettledPerRawPair: clean.settledPerS / raw.pairsPerS,
    faultsSettledPerRawPair: faulty.settledPerS / raw.pairsPerS,
    cleanCallbacksPerRawRequest: clean.callbacksPerS / raw.requestsPerS,
    faultsOverCleanSettled: faulty.settledPerS / clean.settledPerS,
    faultsOverCleanWinP99:
      (faulty.latency['bet → win credit acknowledged']?.p99 ?? Number.NaN) /
      (clean.latency['bet → win credit acknowledged']?.p99 ?? Number.NaN),
  };
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(`\nratio end-to-end settled/s ÷ raw bet+win pairs/s: ${pct(ratios.cleanSettledPerRawPair)}`);
  console.log(`ratio with faults, settled/s ÷ raw pairs/s: ${pct(ratios.faultsSettledPerRawPair)}`);
  console.log(
    `ratio end-to-end callbacks acked/s ÷ raw callback requests/s: ${pct(ratios.cleanCallbacksPerRawRequest)}`,
  );
  console.log(`ratio settled/s with faults ÷ without: ${pct(ratios.faultsOverCleanSettled)}`);
  console.log(
    `ratio p99 bet → win credit with faults ÷ without: ${ratios.faultsOverCleanWinP99.toFixed(2)}x`,
  );
  const file = writeResults('wallet', {
    options: { ...base, speed, faultRate, retryPolicy, timeoutMs, concurrency: num('concurrency', 1) },
    raw,
    endToEnd: { clean, faults: faulty },
    ratios,
  });
  console.log(`results: ${file}`);
} catch (err) {
  console.error(`wallet benchmark failed: ${(err as Error).message}\n${stack.logs()}`);
  process.exitCode = 1;
} finally {
  await collector.disconnect();
  await stack.stop();
}
