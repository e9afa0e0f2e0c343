import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { CrashStats } from '../stats/crash.ts';
import { DoubleStats } from '../stats/double.ts';
import { SlotStats } from '../stats/slot.ts';
import { WallStreetStats } from '../stats/wall-street.ts';
import { barChart, barChartSpec } from './bar-chart.ts';
import { crashCharts, doubleChart, MAX_STREAK_BARS, slotChart, wallStreetChart } from './index.ts';

type Node = Record<string, unknown>;
interface Element {
  readonly tag: string;
  readonly attrs: Node;
  readonly text: string;
  /** `class` attributes of the enclosing elements, innermost last. */
  readonly within: string;
}
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  attributesGroupName: '@',
  isArray: (_name, _path, _leaf, isAttribute) => !isAttribute,
});

/** Parses the SVG (refusing malformed XML) and lists its elements in document order. */
function parse(svg: string): Element[] {
  expect(XMLValidator.validate(svg)).toBe(true);
  const out: Element[] = [];
  const walk = (tag: string, n: Node | string, within: string) => {
    if (typeof n !== 'object') {
      out.push({ tag, attrs: {}, text: String(n), within });
      return;
    }
    const attrs = (n['@'] ?? {}) as Node;
    out.push({ tag, attrs, text: String(n['#text'] ?? ''), within });
    for (const [k, v] of Object.entries(n))
      if (k !== '@' && k !== '#text')
        for (const child of v as (Node | string)[]) walk(k, child, `${within} ${attrs.class ?? ''}`);
  };
  const doc = parser.parse(svg) as { svg: Node[] };
  walk('svg', doc.svg[0] as Node, '');
  expect(out[0]?.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
  return out;
}

/** Texts drawn inside a group of the given Vega role class, e.g. `role-title-text`. */
const texts = (els: Element[], role: string) =>
  els.filter((e) => e.tag === 'text' && e.within.includes(role)).map((e) => e.text);
/** The aria-label of each bar, in data order: "<series>, <category>: <value>". */
const bars = (els: Element[]) =>
  els.filter((e) => e.attrs['aria-roledescription'] === 'bar').map((e) => String(e.attrs['aria-label']));
const marksOf = (els: Element[], name: string) =>
  els.filter((e) => e.tag !== 'g' && e.within.endsWith(`${name}_marks`));

describe('bar chart (Vega-Lite spec rendered by Vega)', () => {
  const spec = {
    title: 'A <chart> & "quotes"',
    subtitle: 'sub',
    xLabel: 'x axis',
    yLabel: 'y axis (units)',
    categories: ['a', 'b', 'c'],
    series: [
      { name: 'observed', values: [1, 2, 3], errors: [0.1, 0.1, 0.1] },
      { name: 'theory', values: [1.5, 2, 2.5] },
    ],
    reference: { value: 2.2, label: 'ref' },
  };

  it('carries one data row per bar, with the whisker ends', () => {
    const data = (barChartSpec(spec) as { data: { values: unknown[] } }).data.values;
    expect(data).toEqual([
      { category: 'a', series: 'observed', value: 1, lo: 0.9, hi: 1.1 },
      { category: 'b', series: 'observed', value: 2, lo: 1.9, hi: 2.1 },
      { category: 'c', series: 'observed', value: 3, lo: 2.9, hi: 3.1 },
      { category: 'a', series: 'theory', value: 1.5 },
      { category: 'b', series: 'theory', value: 2 },
      { category: 'c', series: 'theory', value: 2.5 },
    ]);
  });

  it('renders well-formed SVG with the escaped title, subtitle, axis titles and a legend', async () => {
    const svg = await barChart(spec);
    expect(svg).toContain('A &lt;chart&gt; &amp;');
    const els = parse(svg);
    expect(texts(els, 'role-title-text')).toEqual(['A <chart> & "quotes"']);
    expect(texts(els, 'role-title-subtitle')).toEqual(['sub']);
    expect(texts(els, 'role-axis-title').sort()).toEqual(['x axis', 'y axis (units)']);
    expect(texts(els, 'role-axis-label')).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    expect(texts(els, 'role-legend-label')).toEqual(['observed', 'theory']);
  });

  it('draws one bar per value, a whisker per error and the labelled reference line', async () => {
    const els = parse(await barChart(spec));
    expect(bars(els)).toEqual([
      'observed, a: 1',
      'observed, b: 2',
      'observed, c: 3',
      'theory, a: 1.5',
      'theory, b: 2',
      'theory, c: 2.5',
    ]);
    expect(marksOf(els, 'whiskers').filter((e) => e.tag === 'line')).toHaveLength(3);
    expect(marksOf(els, 'reference').filter((e) => e.tag === 'line')).toHaveLength(1);
    expect(texts(els, 'reference_label_marks')).toEqual(['ref']);
  });

  it('on a log scale: ticks by decades, no bar for values ≤ 0, "(log scale)" in the axis title', async () => {
    const els = parse(
      await barChart({
        title: 't',
        xLabel: 'x',
        yLabel: 'y',
        categories: ['1', '2'],
        series: [{ name: 's', values: [1000, 0] }],
        scale: 'log',
        yFormat: ',',
      }),
    );
    expect(bars(els)).toEqual(['s, 1: 1,000']);
    expect(texts(els, 'role-axis-label')).toEqual(expect.arrayContaining(['1', '10', '100', '1,000']));
    expect(texts(els, 'role-axis-title')).toContain('y (log scale)');
  });
});

describe('charts of the games', () => {
  it('crash: the distribution beside theory, and the house edge with the 1% reference', async () => {
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
    const [dist, edge] = await crashCharts(s.summary());
    expect(dist?.file).toBe('crash-distribution.svg');
    const d = parse(dist?.svg as string);
    expect(texts(d, 'role-title-text')).toEqual(['Crash: distribution of crash points']);
    expect(texts(d, 'role-legend-label')).toEqual(['observed', 'theory (P(point ≥ x) = 0.99/x)']);
    const b = bars(d);
    expect(b).toHaveLength(2 * s.summary().buckets.length);
    expect(b).toContain('observed, 1.00–1.01: 9.09%');
    expect(b).toContain('observed, ≥ 1000.00: 9.09%');
    expect(texts(d, 'role-axis-title')).toContain('share of rounds (%)');
    const e = parse(edge?.svg as string);
    expect(bars(e).map((x) => x.replace(/: .*/, ''))).toEqual(
      ['1.5x', '2x', '3x', '5x', '10x', '100x'].map((t) => `observed edge, ${t}`),
    );
    expect(texts(e, 'reference_label_marks')).toEqual(['theory 1.0%']);
  });

  it('double, slot and wall-street charts carry their series and figures', async () => {
    const d = new DoubleStats();
    for (let i = 0; i < 30; i++) d.add(i % 15 === 0 ? 'white' : i % 15 <= 7 ? 'red' : 'black', i % 15);
    const dc = parse((await doubleChart(d.summary())).svg);
    expect(bars(dc).filter((x) => x.startsWith('theory'))).toEqual([
      'theory, white: 6.67%',
      'theory, red: 46.67%',
      'theory, black: 46.67%',
    ]);
    expect(texts(dc, 'role-title-subtitle').join(' ')).toMatch(/chi-square 0\.00 \(df 2\), p = 1\.000/);

    const s = new SlotStats();
    for (const m of ['0.00', '3.00', '7.00', '0.00']) s.add(m);
    const sc = bars(parse((await slotChart(s.summary())).svg));
    expect(sc).toEqual(
      expect.arrayContaining(['observed, 3x: 75.00%', 'observed, 7x: 175.00%', 'observed, 500x: 0.00%']),
    );
    expect(sc.some((x) => x.includes(' 0x:'))).toBe(false);

    const w = new WallStreetStats();
    // Streaks of 1..20: the lengths past MAX_STREAK_BARS - 1 share the last bar.
    let id = 0;
    for (let len = 1; len <= 20; len++) for (let k = 0; k < len; k++) w.add(len % 2 ? 'up' : 'down', id++);
    const wc = parse((await wallStreetChart(w.summary())).svg);
    const observed = bars(wc).filter((x) => x.startsWith('observed,'));
    expect(observed).toHaveLength(MAX_STREAK_BARS);
    expect(observed.at(-1)).toBe(`observed, ${MAX_STREAK_BARS}+: ${20 - MAX_STREAK_BARS + 1}`);
    expect(texts(wc, 'role-title-subtitle').join(' ')).toContain('longest streak 20 down');
  });
});
