/**
 * The tables and ratios bench/wallet.ts prints (bench/lib.ts report): the raw baselines, every
 * scenario's counts and rates, latencies, the hop breakdown of round end → win credit, CPU per
 * process group and the services' own timings, then the wallet figures as ratios beside their
 * baselines and targets.
 */
import type { RetryPolicy } from '../rules/retry/schedule.ts';
import { report } from './lib.ts';
import type { ScenarioResult } from './wallet-e2e.ts';
import type { RawResult } from './wallet-raw.ts';
import type { UsageDelta } from './wallet-usage.ts';

/** One stack's runs: its raw baseline (with the CPU the machine used meanwhile) and its scenarios. */
export interface StackRun {
  readonly instances: number;
  readonly raw: RawResult;
  readonly rawUsage: UsageDelta;
  readonly scenarios: ScenarioResult[];
}

/**
 * The CPU bound on the settled-to-raw ratio, from what the machine used (all cores busy, /proc/stat): CPU
 * ms per raw bet+win pair during the baseline, and per settled bet in a scenario (its share of
 * everything that ran: API, engine, projector, settlement, saga, Kafka, Postgres, the sandbox and
 * the bench's players). On `cores` cores a run bound by CPU settles at most cores ÷ (CPU per
 * settled bet), so that ÷ the raw pair rate bounds the ratio this machine can show, whatever the
 * latency. Approximate: CPU per bet may fall somewhat under heavier load (bigger batches).
 * @returns ms per pair, ms per settled bet, the most settled/s on `cores`, and that ÷ raw pairs/s.
 */
export function cpuBound(
  raw: RawResult,
  rawUsage: UsageDelta,
  scenario: ScenarioResult,
  cores: number,
): { msPerPair: number; msPerSettled: number; maxSettledPerS: number; ceiling: number } {
  const msPerPair = ((rawUsage.machineCores * rawUsage.seconds) / raw.pairs) * 1000;
  const msPerSettled = ((scenario.usage.machineCores * scenario.usage.seconds) / scenario.settled) * 1000;
  const maxSettledPerS = (cores * 1000) / msPerSettled;
  return { msPerPair, msPerSettled, maxSettledPerS, ceiling: maxSettledPerS / raw.pairsPerS };
}

export interface ReportOptions {
  /** Cores of this machine (the CPU bound). */
  readonly cores: number;
  readonly game: string;
  readonly speed: number;
  readonly players: number;
  readonly seconds: number;
  readonly rate: number;
  readonly maxOpen: number;
  readonly warmupS: number;
  readonly faultRate: number;
  readonly roundClose: string;
  readonly concurrency: number;
  readonly retryPolicy: RetryPolicy;
  /** The operator row's callback timeout, ms. */
  readonly timeoutMs: number;
}

const f1 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(2) : '-');
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');
const MAIN = 'round end → win booked at the operator';

const name = (s: ScenarioResult) => s.label.replace(/^\d+x-/, '');
const rows = (runs: readonly StackRun[]) =>
  runs.flatMap((r) => r.scenarios.map((s) => ({ run: r, s, id: `${r.instances}×${name(s)}` })));

/** Prints everything; returns the ratios (also written to the results file). */
export function printWalletReport(runs: readonly StackRun[], o: ReportOptions): Record<string, number> {
  report(
    `Baseline: signed bet+win callback pairs straight to the sandbox (${o.concurrency} at a time), per stack`,
    runs.map(({ instances, raw }) => ({
      stack: `${instances} settlement + ${instances} saga`,
      's ': f1(raw.elapsedMs / 1000),
      requests: raw.requests,
      'requests/s': f1(raw.requestsPerS),
      'pairs/s': f1(raw.pairsPerS),
      'request p50 ms': f1(raw.requestP50Ms),
      'request p99 ms': f1(raw.requestP99Ms),
      errors: raw.errors,
    })),
  );
  const pace = (s: ScenarioResult) => (s.pace.kind === 'paced' ? `${s.pace.betsPerS}/s paced` : 'saturated');
  report(
    `End to end on ${o.game} (ROUND_SPEED ${o.speed}), ${o.players} players, ≤ ${o.maxOpen} bets unfinished; ${o.seconds} s of bets per scenario, ` +
      `settled/s counted after ${o.warmupS} s; faults: ${pct(o.faultRate)} of callbacks answer 500, retry ${JSON.stringify(o.retryPolicy)}`,
    rows(runs).map(({ s, id }) => ({
      scenario: id,
      pace: pace(s),
      placed: s.placed,
      '409 waits': s.waits,
      settled: s.settled,
      won: s.won,
      lost: s.lost,
      rejected: s.rejected,
      cancelled: s.cancelled,
      retried: s.retried,
      parked: s.parked,
      unfinished: s.unfinished,
      'bets/s': f1(s.betsPerS),
      'settled/s': f1(s.settledPerS),
      'settled/s overall': f1(s.settledPerSOverall),
    })),
  );
  for (const { s, id } of rows(runs))
    if (s.placementErrors > 0 || s.dropped > 0 || s.skipped > 0)
      console.log(
        `${id}: ${s.placementErrors} placements failed${s.firstPlacementError ? ` (first: ${s.firstPlacementError})` : ''}, ` +
          `${s.dropped} given up waiting for a window at the end, ${s.skipped} not sent at the open-bets cap`,
      );
  const latencyRows = (
    pick: (s: ScenarioResult) => Record<string, { n: number; p50: number; p99: number; max: number }>,
  ) =>
    rows(runs).flatMap(({ s, id }) =>
      Object.entries(pick(s)).map(([what, l]) => ({
        scenario: id,
        what,
        n: l.n,
        p50: f1(l.p50),
        p99: f1(l.p99),
        max: f1(l.max),
      })),
    );
  report(
    'Latency, ms (event and booking times, one clock: this machine)',
    latencyRows((s) => s.latency),
  );
  report(
    'Round end → win booked at the operator, hop by hop, ms (wins only; a hop’s p99s do not add up to the total’s)',
    latencyRows((s) => s.hops),
  );
  report(
    'POST /play/bets → debit acknowledged, hop by hop, ms (every bet)',
    latencyRows((s) => s.betHops),
  );
  for (const { s, id } of rows(runs))
    if (s.lateDebits > 0)
      console.log(`${id}: ${s.lateDebits} wins had their debit acknowledged after their round ended`);
  report(
    'CPU, cores busy on average per scenario (2 cores in all; kafka and postgres are shared with anything else running, other = the rest of the machine)',
    rows(runs).map(({ s, id }) => ({
      scenario: id,
      load1: f2(s.usage.loadavg1),
      machine: f2(s.usage.machineCores),
      ...Object.fromEntries(Object.entries(s.usage.cores).map(([k, v]) => [k, f2(v)])),
    })),
  );
  report(
    'Services’ own timings per scenario (from /metrics): committed consumer writes and callback attempts',
    rows(runs).flatMap(({ s, id }) => [
      ...Object.entries(s.usage.writes).map(([k, w]) => ({
        scenario: id,
        what: `write ${k}`,
        n: w.n,
        'mean ms': f1(w.meanMs),
        'records/batch': f1(w.recordsPerBatch),
      })),
      ...Object.entries(s.usage.callbacks).map(([k, c]) => ({
        scenario: id,
        what: `callback ${k}`,
        n: c.n,
        'mean ms': f1(c.meanMs),
        'records/batch': '',
      })),
    ]),
  );
  for (const { s, id } of rows(runs)) {
    const codes = Object.entries(s.rejections).map(([k, n]) => `${k} ${n}`);
    if (codes.length > 0) console.log(`${id} bets rejected or cancelled: ${codes.join(', ')}`);
    const answers = Object.entries(s.usage.answers).map(([k, n]) => `${k} ${n}`);
    console.log(
      `${id} callback answers: ${answers.join(', ') || 'none'}${s.usage.breakerOpen ? '; breaker OPEN at the end' : ''}`,
    );
  }
  return printRatios(runs, o);
}

function printRatios(runs: readonly StackRun[], o: ReportOptions): Record<string, number> {
  const find = (instances: number, label: string) =>
    runs.find((r) => r.instances === instances)?.scenarios.find((s) => name(s) === label);
  const one = runs[0];
  const many = runs[1];
  const p = (s: ScenarioResult | undefined, k: 'p50' | 'p99') => s?.latency[MAIN]?.[k] ?? Number.NaN;
  const [sat1, paced1] = [find(1, 'saturated'), find(1, 'paced')];
  const [satF, pacedF] = [find(1, 'saturated-faults'), find(1, 'paced-faults')];
  const ratios: Record<string, number> = {
    settledPerRawPair: (sat1?.settledPerS ?? Number.NaN) / (one?.raw.pairsPerS ?? Number.NaN),
    pacedP50Ms: p(paced1, 'p50'),
    pacedP99Ms: p(paced1, 'p99'),
    pacedBetsPerS: paced1?.betsPerS ?? Number.NaN,
    pacedP99OverRawRequestP99: p(paced1, 'p99') / (one?.raw.requestP99Ms ?? Number.NaN),
    faultsOverCleanSettled: (satF?.settledPerS ?? Number.NaN) / (sat1?.settledPerS ?? Number.NaN),
    faultsOverCleanP99: p(pacedF, 'p99') / p(paced1, 'p99'),
    faultsP99Ms: p(pacedF, 'p99'),
  };
  console.log(
    `\n## Figures (targets: settled ≥ 80% of raw pairs; round end → win credit p99 ≤ 250 ms at ${o.rate} bets/s)`,
  );
  console.log(
    `1×1 settled/s ÷ raw bet+win pairs/s: ${f1(sat1?.settledPerS)} ÷ ${f1(one?.raw.pairsPerS)} = ${pct(ratios.settledPerRawPair as number)}`,
  );
  if (one && sat1 && sat1.settled > 0) {
    const b = cpuBound(one.raw, one.rawUsage, sat1, o.cores);
    Object.assign(ratios, {
      cpuMsPerRawPair: b.msPerPair,
      cpuMsPerSettledBet: b.msPerSettled,
      cpuBoundSettledPerS: b.maxSettledPerS,
      cpuBoundRatio: b.ceiling,
    });
    console.log(
      `CPU bound: the machine spent ${f2(b.msPerPair)} CPU-ms per raw pair (${f2(one.rawUsage.machineCores)} cores busy) and ` +
        `${f2(b.msPerSettled)} CPU-ms per settled bet (${f2(sat1.usage.machineCores)} cores busy); on ${o.cores} cores at most ` +
        `${f1(b.maxSettledPerS)} settled/s = ${pct(b.ceiling)} of the raw pair rate`,
    );
  }
  console.log(
    `1×1 paced at ${f1(paced1?.betsPerS)} bets/s (asked ${o.rate}): round end → win booked p50 ${f1(ratios.pacedP50Ms)} ms, ` +
      `p99 ${f1(ratios.pacedP99Ms)} ms = ${f2(ratios.pacedP99OverRawRequestP99)}× the raw callback request p99 (${f1(one?.raw.requestP99Ms)} ms, saturated)`,
  );
  if (many) {
    const [satN, pacedN] = [find(many.instances, 'saturated'), find(many.instances, 'paced')];
    Object.assign(ratios, {
      scaledSettledPerRawPair: (satN?.settledPerS ?? Number.NaN) / many.raw.pairsPerS,
      scaledOverOneSettled: (satN?.settledPerS ?? Number.NaN) / (sat1?.settledPerS ?? Number.NaN),
      // Each stack against its own baseline, so a machine busier during one stack than the other cancels out.
      scaledOverOneSettledPerRaw:
        (satN?.settledPerS ?? Number.NaN) /
        many.raw.pairsPerS /
        ((sat1?.settledPerS ?? Number.NaN) / (one?.raw.pairsPerS ?? Number.NaN)),
      scaledOverOneP50: p(pacedN, 'p50') / p(paced1, 'p50'),
      scaledOverOneP99: p(pacedN, 'p99') / p(paced1, 'p99'),
      scaledP99Ms: p(pacedN, 'p99'),
    });
    const n = many.instances;
    console.log(
      `${n}×${n} settled/s ÷ 1×1: ${f1(satN?.settledPerS)} ÷ ${f1(sat1?.settledPerS)} = ${pct(ratios.scaledOverOneSettled as number)}` +
        `; ÷ its own raw pairs/s ${f1(many.raw.pairsPerS)}: ${pct(ratios.scaledSettledPerRawPair as number)}, ` +
        `which is ${f2(ratios.scaledOverOneSettledPerRaw)}× the 1×1 stack's share of its raw rate`,
    );
    console.log(
      `${n}×${n} paced at ${f1(pacedN?.betsPerS)} bets/s: round end → win booked p50 ${f1(p(pacedN, 'p50'))} ms, p99 ${f1(p(pacedN, 'p99'))} ms; ` +
        `÷ 1×1: p50 ${f2(ratios.scaledOverOneP50)}×, p99 ${f2(ratios.scaledOverOneP99)}×`,
    );
  }
  console.log(
    `1×1 with ${pct(o.faultRate)} of callbacks failing: settled/s ${f1(satF?.settledPerS)} = ${pct(ratios.faultsOverCleanSettled as number)} of without; ` +
      `paced at ${f1(pacedF?.betsPerS)} bets/s round end → win booked p50 ${f1(p(pacedF, 'p50'))} ms, p99 ${f1(ratios.faultsP99Ms)} ms = ${f2(ratios.faultsOverCleanP99)}× without`,
  );
  return ratios;
}
