/**
 * The report as CSV (RFC 4180): one tidy row per figure,
 * `game,section,key,observed,theoretical,note`, so a spreadsheet or pandas can pivot it.
 * Shares and edges are fractions (0.0198, not 1.98%); times are ISO 8601.
 * Quoting and line endings are csv-stringify's.
 */
import { stringify } from 'csv-stringify/sync';
import type { AnalyticsReport } from './fold.ts';

type Cell = string | number | null | undefined;
type Row = readonly [
  game: string,
  section: string,
  key: Cell,
  observed: Cell,
  theoretical?: Cell,
  note?: Cell,
];

export const CSV_HEADER = ['game', 'section', 'key', 'observed', 'theoretical', 'note'] as const;

function fitRows(
  game: string,
  key: string,
  fit: { statistic: number; df: number; p_value: number; low_expected: boolean } | null,
): Row[] {
  if (!fit) return [];
  const note = fit.low_expected ? 'some expected count < 5' : '';
  return [
    [game, 'fit', `${key}_chi_square`, fit.statistic, null, `df ${fit.df}`],
    [game, 'fit', `${key}_p_value`, fit.p_value, null, note],
  ];
}

/** Every figure of the report as rows (header not included). */
export function reportRows(r: AnalyticsReport): Row[] {
  const rows: Row[] = [
    ['all', 'range', 'topic', r.topic],
    ['all', 'range', 'from', r.range.from],
    ['all', 'range', 'to', r.range.to],
    ...r.range.partitions.map(
      (p): Row => ['all', 'range', `partition_${p.partition}`, `${p.from}..${p.to}`, null, '[from, to)'],
    ),
    ['all', 'summary', 'records', r.records],
    ['all', 'summary', 'rounds', r.rounds],
    ['all', 'summary', 'other_games', r.other_games],
    ['all', 'summary', 'undecodable', r.undecodable.count],
    ['all', 'summary', 'elapsed_ms', r.elapsed_ms],
    ['all', 'fairness', 'checked', r.fairness.checked],
    ['all', 'fairness', 'passed', r.fairness.passed],
    ['all', 'fairness', 'failed', r.fairness.failed],
    ['all', 'fairness', 'unproven', r.fairness.unproven],
    ...r.fairness.failures.map(
      (f): Row => [
        f.game,
        'proof_failure',
        f.round_id,
        f.reason,
        null,
        `partition ${f.partition} offset ${f.offset}`,
      ],
    ),
    ...r.undecodable.first.map((u): Row => ['all', 'undecodable', `${u.partition}:${u.offset}`, u.reason]),
  ];
  for (const [game, span] of Object.entries(r.spans)) {
    rows.push([game, 'span', 'first_finished_at', new Date(span.first_finished_at).toISOString()]);
    rows.push([game, 'span', 'last_finished_at', new Date(span.last_finished_at).toISOString()]);
    rows.push(
      [game, 'span', 'first_round_id', span.first_round_id],
      [game, 'span', 'last_round_id', span.last_round_id],
    );
  }
  const { crash, double, slot } = r.games;
  const ws = r.games['wall-street'];
  if (crash) {
    rows.push(['crash', 'summary', 'rounds', crash.rounds], ['crash', 'summary', 'invalid', crash.invalid]);
    rows.push(['crash', 'summary', 'max_point', crash.max_point]);
    for (const p of crash.percentiles)
      rows.push([
        'crash',
        'percentile',
        `p${p.p}`,
        p.point,
        p.theoretical,
        p.exact ? '' : 'bucket lower edge (within 1%)',
      ]);
    for (const b of crash.buckets)
      rows.push([
        'crash',
        'distribution',
        b.to ? `[${b.from},${b.to})` : `>=${b.from}`,
        b.share,
        b.theoretical,
        `${b.count} rounds`,
      ]);
    rows.push(['crash', 'instant_bust', '1.00', crash.instant_bust.share, crash.instant_bust.theoretical]);
    for (const e of crash.house_edge)
      rows.push([
        'crash',
        'house_edge',
        `cash_out_${e.target}x`,
        e.edge,
        e.theoretical,
        `std error ${e.std_error}`,
      ]);
  }
  if (double) {
    rows.push(
      ['double', 'summary', 'rounds', double.rounds],
      ['double', 'summary', 'invalid', double.invalid],
    );
    for (const c of double.colours)
      rows.push(['double', 'colour', c.colour, c.share, c.theoretical, `${c.count} rounds`]);
    double.numbers.forEach((count, n) => {
      rows.push(['double', 'number', n, count, double.rounds / double.numbers.length]);
    });
    rows.push(
      ...fitRows('double', 'colour', double.colour_fit),
      ...fitRows('double', 'number', double.number_fit),
    );
  }
  if (slot) {
    rows.push(['slot', 'summary', 'rounds', slot.rounds], ['slot', 'summary', 'invalid', slot.invalid]);
    rows.push([
      'slot',
      'rtp',
      'rtp',
      slot.rtp,
      slot.theoretical_rtp,
      `std error ${slot.std_error}, z ${slot.z}`,
    ]);
    for (const p of slot.payouts) {
      rows.push(['slot', 'payout', `${p.multiplier}x`, p.share, p.theoretical, `${p.count} rounds`]);
      rows.push(['slot', 'rtp_contribution', `${p.multiplier}x`, p.rtp_share, p.theoretical_rtp_share]);
    }
    rows.push(...fitRows('slot', 'payout', slot.payout_fit));
  }
  if (ws) {
    rows.push(
      ['wall-street', 'summary', 'rounds', ws.rounds],
      ['wall-street', 'summary', 'invalid', ws.invalid],
    );
    rows.push(['wall-street', 'trend', 'up', ws.up_share, 0.5, `${ws.up} rounds`]);
    rows.push([
      'wall-street',
      'trend',
      'down',
      ws.rounds === 0 ? 0 : ws.down / ws.rounds,
      0.5,
      `${ws.down} rounds`,
    ]);
    rows.push(...fitRows('wall-street', 'trend', ws.fit));
    if (ws.longest)
      rows.push([
        'wall-street',
        'streak',
        'longest',
        ws.longest.length,
        null,
        `${ws.longest.trending}, rounds ${ws.longest.from_round_id}..${ws.longest.to_round_id}`,
      ]);
    rows.push(
      ['wall-street', 'streak', 'longest_up', ws.longest_up],
      ['wall-street', 'streak', 'longest_down', ws.longest_down],
    );
    for (const s of ws.streaks) rows.push(['wall-street', 'streak_length', s.length, s.count, s.expected]);
    if (ws.runs_test) {
      const t = ws.runs_test;
      rows.push(['wall-street', 'runs_test', 'runs', t.runs, t.expected_runs]);
      rows.push(['wall-street', 'runs_test', 'z', t.z], ['wall-street', 'runs_test', 'p_value', t.p_value]);
    }
  }
  return rows;
}

/**
 * The report as CSV text: a header line, then every row with six cells (null and undefined are
 * empty; numbers as JavaScript prints them), CRLF line ends including the last.
 */
export function toCsv(r: AnalyticsReport): string {
  const rows = reportRows(r).map((row) => CSV_HEADER.map((_, i) => row[i]));
  // A line break inside a cell is quoted whether it is CR or LF, not only the CRLF delimiter.
  return stringify(rows, {
    columns: [...CSV_HEADER],
    header: true,
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
  });
}
