import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { CrashStats } from '../stats/crash.ts';
import { DoubleStats } from '../stats/double.ts';
import { SlotStats } from '../stats/slot.ts';
import { WallStreetStats } from '../stats/wall-street.ts';
import { crashCharts, doubleChart, MAX_STREAK_BARS, slotChart, wallStreetChart } from './index.ts';
import { barChart, niceTicks } from './svg.ts';

type Node = Record<string, unknown>;
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ['g', 'rect', 'text', 'line'].includes(name),
});

/** Parses the SVG (refusing malformed XML) and returns its root element. */
function parse(svg: string): Node {
  expect(XMLValidator.validate(svg)).toBe(true);
  return (parser.parse(svg) as { svg: Node }).svg;
}

/** Values of each series' bars by category, read back from the data attributes. */
function seriesOf(svg: Node): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const g of (svg.g as Node[]).filter((x) => x.class === 'series'))
    out[g['data-series'] as string] = Object.fromEntries(
      (g.rect as Node[]).map((r) => [r['data-category'] as string, Number(r['data-value'])]),
    );
  return out;
}

const texts = (svg: Node) =>
  (svg.text as (Node | string)[]).map((t) => (typeof t === 'string' ? t : String(t['#text'] ?? '')));

describe('bar chart template', () => {
  const svg = barChart({
    title: 'A <chart> & "quotes"',
    subtitle: 'sub',
    xLabel: 'x axis',
    yLabel: 'y axis',
    categories: ['a', 'b', 'c'],
    series: [
      { name: 'observed', values: [1, 2, 3], errors: [0.1, 0.1, 0.1] },
      { name: 'theory', values: [1.5, 2, 2.5] },
    ],
    reference: { value: 2.2, label: 'ref' },
  });
  const root = parse(svg);

  it('is well-formed SVG with the escaped title, subtitle and axis titles', () => {
    expect(root.xmlns).toBe('http://www.w3.org/2000/svg');
    expect(root.title).toBe('A &#60;chart&#62; &#38; &#34;quotes&#34;');
    const t = texts(root);
    expect(t).toEqual(expect.arrayContaining(['sub', 'x axis', 'y axis', 'a', 'b', 'c', 'ref']));
  });

  it('draws each series with its values, a legend, error whiskers and the reference line', () => {
    expect(seriesOf(root)).toEqual({ observed: { a: 1, b: 2, c: 3 }, theory: { a: 1.5, b: 2, c: 2.5 } });
    expect((root.g as Node[]).filter((g) => g.class === 'legend')).toHaveLength(2);
    expect(svg.match(/<path d="M/g)).toHaveLength(3);
    expect((root.line as Node[]).some((l) => l.class === 'reference')).toBe(true);
  });

  it('picks round ticks covering the data, and log ticks by decades', () => {
    expect(niceTicks(0, 3.1)).toEqual([0, 1, 2, 3, 4]);
    expect(niceTicks(-0.14, 0.02)).toEqual([-0.15, -0.1, -0.05, 0, 0.05]);
    const log = parse(
      barChart({
        title: 't',
        xLabel: 'x',
        yLabel: 'y',
        categories: ['1', '2'],
        series: [{ name: 's', values: [1000, 0] }],
        scale: 'log',
      }),
    );
    expect(texts(log)).toEqual(expect.arrayContaining(['1', '10', '100', '1000', 'y (log scale)']));
  });
});

describe('charts of the games', () => {
  it('crash: the distribution beside theory, and the house edge with the 1% reference', () => {
    const s = new CrashStats();
    for (const p of [
      '1.00',
      '1.20',
      '1.70',
      '2.40',
      '4.00',
      '7.00',
      '15.00',
      '30.00',
      '70.00',
      '500.00',
      '2000.00',
    ])
      s.add(p);
    const [dist, edge] = crashCharts(s.summary());
    expect(dist?.file).toBe('crash-distribution.svg');
    const d = parse(dist?.svg as string);
    expect(d.title).toBe('Crash: distribution of crash points');
    const series = seriesOf(d);
    expect(Object.keys(series)).toEqual(['observed', 'theory (P(point ≥ x) = 0.99/x)']);
    expect(series.observed?.['1.00–1.01']).toBeCloseTo(1 / 11, 12);
    expect(series.observed?.['≥ 1000.00']).toBeCloseTo(1 / 11, 12);
    const e = parse(edge?.svg as string);
    expect(Object.keys(seriesOf(e)['observed edge'] ?? {})).toEqual([
      '1.5x',
      '2x',
      '3x',
      '5x',
      '10x',
      '100x',
    ]);
    expect(texts(e)).toContain('theory 1.0%');
  });

  it('double, slot and wall-street charts carry their series and figures', () => {
    const d = new DoubleStats();
    for (let i = 0; i < 30; i++) d.add(i % 15 === 0 ? 'white' : i % 15 <= 7 ? 'red' : 'black', i % 15);
    const dc = parse(doubleChart(d.summary()).svg);
    expect(seriesOf(dc).theory).toEqual({ white: 1 / 15, red: 7 / 15, black: 7 / 15 });
    expect(texts(dc).join(' ')).toMatch(/chi-square 0\.00 \(df 2\), p = 1\.000/);

    const s = new SlotStats();
    for (const m of ['0.00', '3.00', '7.00', '0.00']) s.add(m);
    const sc = parse(slotChart(s.summary()).svg);
    expect(seriesOf(sc).observed).toMatchObject({ '3x': 0.75, '7x': 1.75, '500x': 0 });
    expect(Object.keys(seriesOf(sc).observed ?? {})).not.toContain('0x');

    const w = new WallStreetStats();
    // Streaks of 1..20: the lengths past MAX_STREAK_BARS - 1 share the last bar.
    let id = 0;
    for (let len = 1; len <= 20; len++) for (let k = 0; k < len; k++) w.add(len % 2 ? 'up' : 'down', id++);
    const wc = parse(wallStreetChart(w.summary()).svg);
    const obs = seriesOf(wc).observed ?? {};
    expect(Object.keys(obs)).toHaveLength(MAX_STREAK_BARS);
    expect(obs[`${MAX_STREAK_BARS}+`]).toBe(20 - MAX_STREAK_BARS + 1);
    expect(texts(wc).join(' ')).toContain('longest streak 20 down');
  });
});
