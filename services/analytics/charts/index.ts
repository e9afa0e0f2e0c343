/**
 * The charts of a report, one SVG file per figure a person would look at: crash point
 * distribution and house edge, double colours, slot RTP by payout, wall-street streak lengths.
 * Each shows the observed figures beside the game's theory; rendered by Vega (bar-chart.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyticsReport } from '../fold.ts';
import type { CrashSummary, DoubleSummary, SlotSummary, WallStreetSummary } from '../stats/index.ts';
import { barChart } from './bar-chart.ts';

export interface Chart {
  /** File name, e.g. "crash-distribution.svg". */
  readonly file: string;
  readonly svg: string;
}

const pct = (digits: number) => (v: number) => `${(v * 100).toFixed(digits)}%`;
const pv = (p: number) => (p < 1e-4 ? p.toExponential(1) : p.toFixed(3));
const n = (x: number) => x.toLocaleString('en-US');
/** Streak lengths drawn one bar each; longer ones share the last bar. */
export const MAX_STREAK_BARS = 16;

/** The crash point distribution and the house edge by cash-out target, beside theory. */
export async function crashCharts(c: CrashSummary): Promise<Chart[]> {
  const median = c.percentiles.find((p) => p.p === 50);
  return [
    {
      file: 'crash-distribution.svg',
      svg: await barChart({
        title: 'Crash: distribution of crash points',
        subtitle: `${n(c.rounds)} rounds · median ${median?.point ?? '-'} (theory ${median?.theoretical ?? '1.98'}) · instant bust ${pct(2)(c.instant_bust.share)} (theory ${pct(2)(c.instant_bust.theoretical)}) · max ${c.max_point ?? '-'}`,
        xLabel: 'crash point (× stake, bucket from – to)',
        yLabel: 'share of rounds (%)',
        categories: c.buckets.map((b) => (b.to ? `${b.from}–${b.to}` : `≥ ${b.from}`)),
        series: [
          { name: 'observed', values: c.buckets.map((b) => b.share) },
          { name: 'theory (P(point ≥ x) = 0.99/x)', values: c.buckets.map((b) => b.theoretical) },
        ],
        yFormat: '.0%',
        valueFormat: '.2%',
      }),
    },
    {
      file: 'crash-house-edge.svg',
      svg: await barChart({
        title: 'Crash: empirical house edge by cash-out target',
        subtitle: `${n(c.rounds)} rounds · edge = 1 − target × P(point ≥ target) · whiskers ±2 standard errors`,
        xLabel: 'player cashes out at (× stake)',
        yLabel: 'house edge (% of stakes)',
        categories: c.house_edge.map((e) => `${e.target}x`),
        series: [
          {
            name: 'observed edge',
            values: c.house_edge.map((e) => e.edge),
            errors: c.house_edge.map((e) => 2 * e.std_error),
          },
        ],
        yFormat: '.0%',
        valueFormat: '.2%',
        reference: {
          value: c.house_edge[0]?.theoretical ?? 0.01,
          label: `theory ${pct(1)(c.house_edge[0]?.theoretical ?? 0.01)}`,
        },
      }),
    },
  ];
}

/** Colour frequencies beside 1/15, 7/15, 7/15, with the chi-square fit in the subtitle. */
export async function doubleChart(d: DoubleSummary): Promise<Chart> {
  const f = d.colour_fit;
  return {
    file: 'double-colours.svg',
    svg: await barChart({
      title: 'Double: colour frequencies',
      subtitle: `${n(d.rounds)} rounds · ${f ? `chi-square ${f.statistic.toFixed(2)} (df ${f.df}), p = ${pv(f.p_value)}` : 'no rounds'} · theory 1/15 white, 7/15 red, 7/15 black`,
      xLabel: 'colour',
      yLabel: 'share of rounds (%)',
      categories: d.colours.map((c) => c.colour),
      series: [
        { name: 'observed', values: d.colours.map((c) => c.share) },
        { name: 'theory', values: d.colours.map((c) => c.theoretical) },
      ],
      yFormat: '.0%',
      valueFormat: '.2%',
    }),
  };
}

/** Each paying symbol's part of the RTP beside the paytable's; the bars add up to the RTP. */
export async function slotChart(s: SlotSummary): Promise<Chart> {
  const paying = s.payouts.filter((p) => Number(p.multiplier) > 0);
  return {
    file: 'slot-rtp.svg',
    svg: await barChart({
      title: 'Slot: return to player by payout',
      subtitle: `${n(s.rounds)} rounds · RTP ${pct(2)(s.rtp)} ± ${pct(2)(s.std_error)} (z ${s.z.toFixed(2)}) · paytable ${pct(2)(s.theoretical_rtp)} · bars add up to the RTP`,
      xLabel: 'payout (× stake)',
      yLabel: 'part of the RTP (% of stakes)',
      categories: paying.map((p) => `${Number(p.multiplier)}x`),
      series: [
        { name: 'observed', values: paying.map((p) => p.rtp_share) },
        { name: 'paytable', values: paying.map((p) => p.theoretical_rtp_share) },
      ],
      yFormat: '.0%',
      valueFormat: '.2%',
    }),
  };
}

/** Counts of streak lengths beside a fair coin's expectation, on a log scale. */
export async function wallStreetChart(w: WallStreetSummary): Promise<Chart> {
  const shown = w.streaks.slice(0, MAX_STREAK_BARS - 1);
  const rest = w.streaks.slice(MAX_STREAK_BARS - 1);
  const bars = rest.length
    ? [
        ...shown,
        {
          length: MAX_STREAK_BARS,
          count: rest.reduce((a, s) => a + s.count, 0),
          expected: rest.reduce((a, s) => a + s.expected, 0),
        },
      ]
    : shown;
  const runs = w.runs_test
    ? `runs test z ${w.runs_test.z.toFixed(2)}, p = ${pv(w.runs_test.p_value)}`
    : 'runs test: too few rounds';
  return {
    file: 'wall-street-streaks.svg',
    svg: await barChart({
      title: 'Wall Street: streak lengths',
      subtitle: `${n(w.rounds)} rounds · up ${pct(2)(w.up_share)} · longest streak ${w.longest ? `${w.longest.length} ${w.longest.trending}` : '-'} · ${runs}`,
      xLabel: 'streak length (rounds in a row with the same trend)',
      yLabel: 'streaks (count)',
      categories: bars.map((b) =>
        rest.length && b.length === MAX_STREAK_BARS ? `${b.length}+` : String(b.length),
      ),
      series: [
        { name: 'observed', values: bars.map((b) => b.count) },
        { name: 'fair coin', values: bars.map((b) => b.expected) },
      ],
      scale: 'log',
      yFormat: ',',
      valueFormat: ',.1~f',
    }),
  };
}

/** Every chart of the games in the report. */
export async function chartsOf(r: AnalyticsReport): Promise<Chart[]> {
  const g = r.games;
  return [
    ...(g.crash ? await crashCharts(g.crash) : []),
    ...(g.double ? [await doubleChart(g.double)] : []),
    ...(g.slot ? [await slotChart(g.slot)] : []),
    ...(g['wall-street'] ? [await wallStreetChart(g['wall-street'])] : []),
  ];
}

/**
 * Writes the charts of `r` into `dir` (created when missing).
 * @returns the paths written.
 * @throws the file system's error when `dir` cannot be created or written; Vega's on a bad spec.
 */
export async function writeCharts(dir: string, r: AnalyticsReport): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  return (await chartsOf(r)).map((c) => {
    const path = join(dir, c.file);
    writeFileSync(path, c.svg);
    return path;
  });
}
