/**
 * The charts of a report, one SVG file per figure a person would look at: crash point
 * distribution and house edge, double colours, slot RTP by payout, wall-street streak lengths.
 * Each shows the observed figures beside the game's theory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyticsReport } from '../fold.ts';
import type { CrashSummary, DoubleSummary, SlotSummary, WallStreetSummary } from '../stats/index.ts';
import { barChart } from './svg.ts';

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

export function crashCharts(c: CrashSummary): Chart[] {
  const median = c.percentiles.find((p) => p.p === 50);
  return [
    {
      file: 'crash-distribution.svg',
      svg: barChart({
        title: 'Crash: distribution of crash points',
        subtitle: `${n(c.rounds)} rounds · median ${median?.point ?? '-'} (theory ${median?.theoretical ?? '1.98'}) · instant bust ${pct(2)(c.instant_bust.share)} (theory ${pct(2)(c.instant_bust.theoretical)}) · max ${c.max_point ?? '-'}`,
        xLabel: 'crash point (multiplier, bucket from – to)',
        yLabel: 'share of rounds',
        categories: c.buckets.map((b) => (b.to ? `${b.from}–${b.to}` : `≥ ${b.from}`)),
        series: [
          { name: 'observed', values: c.buckets.map((b) => b.share) },
          { name: 'theory (P(point ≥ x) = 0.99/x)', values: c.buckets.map((b) => b.theoretical) },
        ],
        yFormat: pct(0),
      }),
    },
    {
      file: 'crash-house-edge.svg',
      svg: barChart({
        title: 'Crash: empirical house edge by cash-out target',
        subtitle: `${n(c.rounds)} rounds · edge = 1 − target × P(point ≥ target) · whiskers ±2 standard errors`,
        xLabel: 'player cashes out at',
        yLabel: 'house edge',
        categories: c.house_edge.map((e) => `${e.target}x`),
        series: [
          {
            name: 'observed edge',
            values: c.house_edge.map((e) => e.edge),
            errors: c.house_edge.map((e) => 2 * e.std_error),
          },
        ],
        yFormat: pct(1),
        reference: {
          value: c.house_edge[0]?.theoretical ?? 0.01,
          label: `theory ${pct(1)(c.house_edge[0]?.theoretical ?? 0.01)}`,
        },
      }),
    },
  ];
}

export function doubleChart(d: DoubleSummary): Chart {
  const f = d.colour_fit;
  return {
    file: 'double-colours.svg',
    svg: barChart({
      title: 'Double: colour frequencies',
      subtitle: `${n(d.rounds)} rounds · ${f ? `chi-square ${f.statistic.toFixed(2)} (df ${f.df}), p = ${pv(f.p_value)}` : 'no rounds'} · theory 1/15 white, 7/15 red, 7/15 black`,
      xLabel: 'colour',
      yLabel: 'share of rounds',
      categories: d.colours.map((c) => c.colour),
      series: [
        { name: 'observed', values: d.colours.map((c) => c.share) },
        { name: 'theory', values: d.colours.map((c) => c.theoretical) },
      ],
      yFormat: pct(0),
    }),
  };
}

export function slotChart(s: SlotSummary): Chart {
  const paying = s.payouts.filter((p) => Number(p.multiplier) > 0);
  return {
    file: 'slot-rtp.svg',
    svg: barChart({
      title: 'Slot: return to player by payout',
      subtitle: `${n(s.rounds)} rounds · RTP ${pct(2)(s.rtp)} ± ${pct(2)(s.std_error)} (z ${s.z.toFixed(2)}) · paytable ${pct(2)(s.theoretical_rtp)} · bars add up to the RTP`,
      xLabel: 'payout (multiplier of the stake)',
      yLabel: 'part of the RTP',
      categories: paying.map((p) => `${Number(p.multiplier)}x`),
      series: [
        { name: 'observed', values: paying.map((p) => p.rtp_share) },
        { name: 'paytable', values: paying.map((p) => p.theoretical_rtp_share) },
      ],
      yFormat: pct(0),
    }),
  };
}

export function wallStreetChart(w: WallStreetSummary): Chart {
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
    svg: barChart({
      title: 'Wall Street: streak lengths',
      subtitle: `${n(w.rounds)} rounds · up ${pct(2)(w.up_share)} · longest streak ${w.longest ? `${w.longest.length} ${w.longest.trending}` : '-'} · ${runs}`,
      xLabel: 'streak length (rounds in a row with the same trend)',
      yLabel: 'streaks',
      categories: bars.map((b) =>
        rest.length && b.length === MAX_STREAK_BARS ? `${b.length}+` : String(b.length),
      ),
      series: [
        { name: 'observed', values: bars.map((b) => b.count) },
        { name: 'fair coin', values: bars.map((b) => b.expected) },
      ],
      scale: 'log',
      yFormat: (v) => n(v),
    }),
  };
}

/** Every chart of the games in the report. */
export function chartsOf(r: AnalyticsReport): Chart[] {
  const g = r.games;
  return [
    ...(g.crash ? crashCharts(g.crash) : []),
    ...(g.double ? [doubleChart(g.double)] : []),
    ...(g.slot ? [slotChart(g.slot)] : []),
    ...(g['wall-street'] ? [wallStreetChart(g['wall-street'])] : []),
  ];
}

/**
 * Writes the charts of `r` into `dir` (created when missing).
 * @returns the paths written.
 * @throws the file system's error when `dir` cannot be created or written.
 */
export function writeCharts(dir: string, r: AnalyticsReport): string[] {
  mkdirSync(dir, { recursive: true });
  return chartsOf(r).map((c) => {
    const path = join(dir, c.file);
    writeFileSync(path, c.svg);
    return path;
  });
}
