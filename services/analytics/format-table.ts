/**
 * The report as plain-text tables for a terminal: a header with the range and the fairness
 * check, then one block per game, observed beside theory. Tables are laid out by cli-table3.
 */
import Table from 'cli-table3';
import type { AnalyticsReport } from './fold.ts';
import type { ChiSquare } from './stats/fit.ts';

/** No frame: columns two spaces apart and a dashed rule under the header, as `psql` prints. */
const PLAIN = {
  chars: {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '-',
    'mid-mid': '  ',
    right: '',
    'right-mid': '',
    middle: '  ',
  },
  // No colours either: the report is also piped to files.
  style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 0 },
};

/**
 * A plain-text table: left-aligned first column, right-aligned others, the header underlined.
 * @returns the lines joined with `\n`, no trailing spaces and no final newline.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const t = new Table({
    ...PLAIN,
    head: [...header],
    colAligns: header.map((_, i) => (i === 0 ? 'left' : 'right')),
  });
  t.push(...rows.map((r) => [...r]));
  // A one-column table pads its only (left-aligned) cells.
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}

const pct = (x: number, digits = 2) => `${(x * 100).toFixed(digits)}%`;
const int = (n: number) => n.toLocaleString('en-US');
const pv = (p: number) => (p < 1e-4 ? p.toExponential(1) : p.toFixed(4));
const fitText = (f: ChiSquare | null) =>
  f
    ? `chi-square ${f.statistic.toFixed(2)} (df ${f.df}), p = ${pv(f.p_value)}${f.low_expected ? ' (some expected count < 5: indicative)' : ''}`
    : 'no rounds';

function crashBlock(c: NonNullable<AnalyticsReport['games']['crash']>): string[] {
  return [
    `crash: ${int(c.rounds)} rounds, max point ${c.max_point ?? '-'}${c.invalid ? `, ${c.invalid} invalid` : ''}`,
    textTable(
      ['crash point', 'rounds', 'share', 'theory'],
      c.buckets.map((b) => [
        b.to ? `${b.from} – ${b.to}` : `≥ ${b.from}`,
        int(b.count),
        pct(b.share),
        pct(b.theoretical),
      ]),
    ),
    textTable(
      ['percentile', 'point', 'theory'],
      c.percentiles.map((p) => [`p${p.p}`, `${p.exact ? '' : '≈'}${p.point}`, p.theoretical]),
    ),
    textTable(
      ['cash out at', 'house edge', '± std err', 'theory'],
      c.house_edge.map((e) => [`${e.target}x`, pct(e.edge, 3), pct(e.std_error, 3), pct(e.theoretical, 3)]),
    ),
    `instant bust (1.00): ${pct(c.instant_bust.share, 3)}, theory ${pct(c.instant_bust.theoretical, 3)}`,
  ];
}

function doubleBlock(d: NonNullable<AnalyticsReport['games']['double']>): string[] {
  return [
    `double: ${int(d.rounds)} rounds${d.invalid ? `, ${d.invalid} invalid` : ''}`,
    textTable(
      ['colour', 'rounds', 'share', 'theory'],
      d.colours.map((c) => [c.colour, int(c.count), pct(c.share), pct(c.theoretical)]),
    ),
    `colours: ${fitText(d.colour_fit)}`,
    `wheel slots 0..14: ${d.numbers.map(int).join(' ')}; ${fitText(d.number_fit)}`,
  ];
}

function slotBlock(s: NonNullable<AnalyticsReport['games']['slot']>): string[] {
  return [
    `slot: ${int(s.rounds)} rounds${s.invalid ? `, ${s.invalid} invalid` : ''}; RTP ${pct(s.rtp, 3)} ± ${pct(s.std_error, 3)} (z ${s.z.toFixed(2)}), paytable ${pct(s.theoretical_rtp, 3)}`,
    textTable(
      ['payout', 'rounds', 'share', 'theory', 'RTP part', 'theory'],
      s.payouts.map((p) => [
        `${p.multiplier}x`,
        int(p.count),
        pct(p.share, 4),
        pct(p.theoretical, 4),
        pct(p.rtp_share),
        pct(p.theoretical_rtp_share),
      ]),
    ),
    `payouts: ${fitText(s.payout_fit)}`,
  ];
}

function wallStreetBlock(w: NonNullable<AnalyticsReport['games']['wall-street']>): string[] {
  const longest = w.longest
    ? `${w.longest.length} ${w.longest.trending} (rounds ${w.longest.from_round_id}..${w.longest.to_round_id})`
    : '-';
  const runs = w.runs_test
    ? `runs ${int(w.runs_test.runs)}, expected ${w.runs_test.expected_runs.toFixed(1)}, z ${w.runs_test.z.toFixed(2)}, p = ${pv(w.runs_test.p_value)}`
    : 'runs test: not enough rounds';
  return [
    `wall-street: ${int(w.rounds)} rounds${w.invalid ? `, ${w.invalid} invalid` : ''}; up ${int(w.up)} (${pct(w.up_share)}), down ${int(w.down)}; ${fitText(w.fit)}`,
    `longest streak ${longest}; longest up ${w.longest_up}, longest down ${w.longest_down}; ${runs}`,
    textTable(
      ['streak length', 'streaks', 'fair coin'],
      w.streaks.map((s) => [String(s.length), int(s.count), s.expected.toFixed(1)]),
    ),
  ];
}

/** The whole report as text. */
export function toTable(r: AnalyticsReport): string {
  const f = r.fairness;
  const out: string[] = [
    `topic ${r.topic}, from ${r.range.from} to ${r.range.to}: ${r.range.partitions.map((p) => `p${p.partition} [${p.from}, ${p.to})`).join(', ')}`,
    `${int(r.records)} records, ${int(r.rounds)} rounds of the selected games, ${int(r.other_games)} of others, ${int(r.undecodable.count)} undecodable, ${int(r.elapsed_ms)} ms`,
    `provably fair: ${int(f.checked)} checked, ${int(f.passed)} passed, ${int(f.failed)} FAILED, ${int(f.unproven)} without proof`,
  ];
  if (f.failures.length > 0)
    out.push(
      textTable(
        ['failed round', 'game', 'check', 'partition', 'offset'],
        f.failures.map((x) => [String(x.round_id), x.game, x.reason, String(x.partition), x.offset]),
      ),
    );
  if (f.failed > f.failures.length) out.push(`(first ${f.failures.length} of ${f.failed} failures listed)`);
  const g = r.games;
  const blocks = [
    g.crash && crashBlock(g.crash),
    g.double && doubleBlock(g.double),
    g.slot && slotBlock(g.slot),
    g['wall-street'] && wallStreetBlock(g['wall-street']),
  ];
  for (const b of blocks) if (b) out.push('', ...b.flatMap((x) => [x, '']).slice(0, -1));
  return `${out.join('\n')}\n`;
}
