/**
 * Wallet benchmark, every service a real child process on loopback in its
 * own namespace (wallet-stack.ts), players betting only inside betting windows (wallet-windows.ts):
 * 1. bets settled a second end to end with the players saturating the pipeline (a bet is settled
 *    when won and its win credited, or lost and its round closed), beside the sandbox's raw
 *    signed bet+win pair rate measured on the same stack (wallet-raw.ts);
 * 2. round end (RoundFinished appended) → win booked at the operator sandbox, p50/p99, at a paced
 *    `--rate` bets a second (wallet-pacing.ts), with the hop-by-hop breakdown;
 * 3. both again on a second stack with `--instances` settlement and saga processes, as ratios to
 *    one of each;
 * 4. both again on the first stack with `--fault-rate` of callbacks answered 500 (the operator
 *    row's retry policy is a short schedule, so retried wins finish within the run; a failed
 *    debit is rolled back, so those bets end rejected).
 * 5. the CPU bound: CPU-ms the whole machine spent per raw pair and per settled bet, and the most
 *    settled/s (and ratio to the raw rate) this machine's cores allow at that cost.
 * Prints tables and ratios, CPU per process and the machine's load (the players, collector and
 * baseline run in this process on the same cores as the services, Kafka and Postgres), writes
 * bench/results/wallet-<time>.json; asserts nothing.
 *
 * Usage: tsx bench/wallet.ts [--game double] [--speed 10] [--players 150] [--seconds 12]
 *          [--rate 200] [--max-open 400] [--warmup-s 3] [--instances 2]
 *          [--partitions 4] [--sandbox-pool 32] [--fault-rate 0.05] [--round-close zero-win|none] [--raw-seconds 5]
 *          [--concurrency 32] [--drain-s 60] [--scenarios saturated,paced,saturated-faults,paced-faults]
 * --sandbox-pool is the operator sandbox's Postgres connections (the operator's wallet sized for the
 * load; the shared default of 10 made its pool the queue at each round end).
 * --speed is ROUND_SPEED. The default, double at 10, is the shortest cycle whose betting window
 * still gets the API's full 100 ms close guard (a 10 s window and a 5 s spin at speed 1: 1 s and
 * 0.5 s, open two thirds of the time, a round end every 1.5 s): faster rounds shrink the guard below
 * the API's own latency and most bets reach the log after BettingClosed (cancelled), slower ones
 * make each round end a bigger burst. --players share the paced bets, and in the saturated
 * scenarios each bets again once its previous debit is answered; --max-open caps the scenario's
 * unfinished bets in both; --seconds is each scenario's placement time; --instances 1 skips the
 * scale-out stack.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { GAME_SLUGS, type GameSlug } from '../rules/games/catalog.ts';
import type { RetryPolicy } from '../rules/retry/schedule.ts';
import { setFaults } from '../tests/support/wallet-players.ts';
import { writeResults } from './lib.ts';
import { runScenario, startCollector } from './wallet-e2e.ts';
import type { Pace } from './wallet-pacing.ts';
import { benchRawCallbacks } from './wallet-raw.ts';
import { printWalletReport, type StackRun } from './wallet-report.ts';
import { startWalletStack } from './wallet-stack.ts';
import { BetTracker } from './wallet-track.ts';
import { usageDelta, usageSnapshot } from './wallet-usage.ts';
import { RoundWindows } from './wallet-windows.ts';

/** Scenarios of the first stack; the scale-out stack runs the first two of those chosen. */
const SCENARIOS = ['saturated', 'paced', 'saturated-faults', 'paced-faults'] as const;
const { values } = parseArgs({
  options: {
    game: { type: 'string', default: 'double' },
    speed: { type: 'string', default: '10' },
    players: { type: 'string', default: '150' },
    seconds: { type: 'string', default: '12' },
    rate: { type: 'string', default: '200' },
    'max-open': { type: 'string', default: '400' },
    'warmup-s': { type: 'string', default: '3' },
    instances: { type: 'string', default: '2' },
    partitions: { type: 'string', default: '4' },
    'sandbox-pool': { type: 'string', default: '32' },
    'fault-rate': { type: 'string', default: '0.05' },
    'round-close': { type: 'string', default: 'zero-win' },
    'raw-seconds': { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
    'drain-s': { type: 'string', default: '60' },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
  },
});
const num = (name: keyof typeof values, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return n;
};
const game = values.game as GameSlug;
if (!(GAME_SLUGS as readonly string[]).includes(game))
  throw new Error(`--game must be one of ${GAME_SLUGS.join(', ')} (got '${values.game}')`);
const roundClose = values['round-close'] as 'zero-win' | 'none';
if (roundClose !== 'zero-win' && roundClose !== 'none')
  throw new Error(`--round-close must be zero-win or none (got '${values['round-close']}')`);
const opts = {
  game,
  speed: num('speed', 0.1, 1000),
  players: num('players', 1, 1000),
  seconds: num('seconds', 1, 3600),
  rate: num('rate', 1, 100_000),
  maxOpen: num('max-open', 1, 1_000_000),
  warmupS: num('warmup-s', 0, 3600),
  instances: num('instances', 1, 8),
  partitions: num('partitions', 1, 64),
  sandboxPool: num('sandbox-pool', 1, 100),
  faultRate: num('fault-rate', 0, 1),
  roundClose,
  rawSeconds: num('raw-seconds', 0.5, 3600),
  concurrency: num('concurrency', 1, 10_000),
  drainTimeoutMs: num('drain-s', 1, 3600) * 1000,
} as const;
const chosen = (values.scenarios ?? '').split(',').filter((x) => x !== '');
for (const c of chosen)
  if (!(SCENARIOS as readonly string[]).includes(c))
    throw new Error(`--scenarios takes a comma-separated list of ${SCENARIOS.join(', ')} (got '${c}')`);
if (opts.warmupS >= opts.seconds) throw new Error('--warmup-s must be shorter than --seconds');
if (opts.instances > opts.partitions) throw new Error('--partitions must be at least --instances');
// A short schedule, so the wins retried under faults finish within the run.
const retryPolicy: RetryPolicy = { delaysMs: [50, 100, 200, 400, 800], jitter: 0.2 };
const timeoutMs = 5000;

const saturated: Pace = { kind: 'saturated', maxOpen: opts.maxOpen };
const paced = { kind: 'paced', betsPerS: opts.rate, maxOpen: opts.maxOpen } as const satisfies Pace;

async function runStack(instances: number, withFaults: boolean): Promise<StackRun> {
  const stack = await startWalletStack({
    game,
    speed: opts.speed,
    retryPolicy,
    timeoutMs,
    roundClose,
    instances,
    partitions: opts.partitions,
    sandboxPool: opts.sandboxPool,
  });
  const tracker = new BetTracker({ roundClose: roundClose !== 'none' });
  const windows = new RoundWindows(game);
  const collector = await startCollector(stack, tracker, windows);
  try {
    const beforeRaw = await usageSnapshot(stack);
    const raw = await benchRawCallbacks({
      sandboxUrl: stack.sandboxUrl,
      secret: stack.sandboxSecret,
      concurrency: opts.concurrency,
      seconds: opts.rawSeconds,
      timeoutMs,
    });
    const rawUsage = usageDelta(beforeRaw, await usageSnapshot(stack));
    const base = {
      game,
      players: opts.players,
      seconds: opts.seconds,
      warmupS: opts.warmupS,
      drainTimeoutMs: opts.drainTimeoutMs,
    };
    const run = (label: string, pace: Pace, seconds = opts.seconds) =>
      runScenario(stack, tracker, windows, {
        ...base,
        label: `${instances}x-${label}`,
        pace,
        seconds,
      });
    // Warm-up (JIT, pools, the sandbox's accounts): a quarter of the rate, not reported.
    await run('warmup', { ...paced, betsPerS: opts.rate / 4 }, opts.warmupS + 1);
    const scenarios = [];
    for (const name of chosen) {
      const faults = name.endsWith('-faults');
      if (faults && !withFaults) continue;
      await setFaults(stack.sandboxUrl, faults ? [{ mode: 'error500', probability: opts.faultRate }] : []);
      scenarios.push(await run(name, name.startsWith('saturated') ? saturated : paced));
    }
    return { instances, raw, rawUsage, scenarios };
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${stack.logs()}`);
  } finally {
    await collector.disconnect();
    await stack.stop();
  }
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load ${load()} at the start; ` +
    'the players, collector and raw baseline run in this process on the same cores as every service, Kafka and Postgres',
);
try {
  const runs = [await runStack(1, true)];
  if (opts.instances > 1) runs.push(await runStack(opts.instances, false));
  console.log(`load at the end: ${load()}`);
  const ratios = printWalletReport(runs, { ...opts, cores: cpus().length, retryPolicy, timeoutMs });
  const file = writeResults('wallet', { options: { ...opts, retryPolicy, timeoutMs }, runs, ratios });
  console.log(`results: ${file}`);
} catch (err) {
  console.error(`wallet benchmark failed: ${(err as Error).message}`);
  process.exitCode = 1;
}
