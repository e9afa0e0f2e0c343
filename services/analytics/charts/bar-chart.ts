/**
 * Grouped bar charts as Vega-Lite specifications, rendered to standalone SVG on the server by
 * Vega (`renderer: 'none'`: no browser, no canvas). The layout, axes, ticks, legend and escaping
 * are the libraries'; this module only says what to draw.
 *
 * Every bar carries an `aria-label` "<series>, <category>: <value>" (`aria-roledescription="bar"`),
 * so screen readers, tests and scripts can read the figures back from the file.
 */
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export interface Series {
  readonly name: string;
  readonly values: readonly number[];
  /** Half-width of an error whisker per value (same unit), drawn on linear scales when given. */
  readonly errors?: readonly number[];
}

export interface BarChartSpec {
  readonly title: string;
  readonly subtitle?: string;
  readonly xLabel: string;
  /** Axis title with its unit; " (log scale)" is appended on a log scale. */
  readonly yLabel: string;
  readonly categories: readonly string[];
  readonly series: readonly Series[];
  /** d3-format pattern of the y tick labels, e.g. ".0%" (default: Vega's own). */
  readonly yFormat?: string;
  /** d3-format pattern of the values in the bars' labels (default: `yFormat`). */
  readonly valueFormat?: string;
  /** log10 for counts spanning decades; values ≤ 0 then draw no bar. */
  readonly scale?: 'linear' | 'log';
  /** A dashed horizontal line, e.g. the theoretical house edge, labelled at its right end. */
  readonly reference?: { readonly value: number; readonly label: string };
}

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9'];
const REFERENCE_COLOUR = '#D55E00';
const PLOT_WIDTH = 720;
const PLOT_HEIGHT = 300;
const Y_TICKS = 8;
/** Rough width of one tick-label character at 12 px, to decide when category labels slant. */
const CHAR_PX = 7;

interface Row {
  category: string;
  series: string;
  value: number;
  lo?: number;
  hi?: number;
}

/** One row per drawable bar; on a log scale a value ≤ 0 has no bar (and would break the domain). */
function rowsOf(c: BarChartSpec): Row[] {
  const log = c.scale === 'log';
  return c.series.flatMap((s) =>
    c.categories.flatMap((category, i): Row[] => {
      const value = s.values[i];
      if (value === undefined || !Number.isFinite(value) || (log && value <= 0)) return [];
      const e = s.errors?.[i];
      return [
        e === undefined || log
          ? { category, series: s.name, value }
          : { category, series: s.name, value, lo: value - e, hi: value + e },
      ];
    }),
  );
}

/** Powers of ten covering the values (1 to 10 at least); `rows` hold only positive values. */
function decades(rows: readonly Row[]): number[] {
  const lo = Math.floor(Math.log10(Math.min(1, ...rows.map((r) => r.value))));
  const hi = Math.max(1, Math.ceil(Math.log10(Math.max(1, ...rows.map((r) => r.value)))));
  return Array.from({ length: hi - lo + 1 }, (_, k) => 10 ** (lo + k));
}

/**
 * The Vega-Lite specification of `c`: bars grouped by category (`xOffset` by series), colour by
 * series with a legend above the plot, optional whiskers and reference line.
 */
export function barChartSpec(c: BarChartSpec): TopLevelSpec {
  const log = c.scale === 'log';
  const rows = rowsOf(c);
  const valueFormat = c.valueFormat ?? c.yFormat ?? '';
  const longest = Math.max(1, ...c.categories.map((x) => x.length));
  const slant = longest * CHAR_PX > PLOT_WIDTH / Math.max(1, c.categories.length) - 4;
  const y = {
    type: 'quantitative',
    title: log ? `${c.yLabel} (log scale)` : c.yLabel,
    // The same tick count for the scale's nice domain and the axis, so the top has a label.
    scale: log ? { type: 'log' } : { zero: true, nice: Y_TICKS },
    // Decades only on a log axis: Vega's default adds 2 and 5 multiples and a grid line per unit.
    axis: {
      ...(c.yFormat ? { format: c.yFormat } : {}),
      ...(log ? { values: decades(rows) } : { tickCount: Y_TICKS }),
    },
  } as const;
  // On the data layers only: the reference line spans the plot and must add no category.
  const x = {
    field: 'category',
    type: 'nominal',
    sort: [...c.categories],
    title: c.xLabel,
    axis: slant ? { labelAngle: -35, labelAlign: 'right' } : { labelAngle: 0 },
  } as const;
  const xOffset = { field: 'series', type: 'nominal', sort: c.series.map((s) => s.name) } as const;
  const layers: object[] = [
    {
      transform: [
        {
          calculate: `datum.series + ', ' + datum.category + ': ' + format(datum.value, ${JSON.stringify(valueFormat)})`,
          as: 'label',
        },
      ],
      name: 'bars',
      mark: { type: 'bar' },
      encoding: {
        x,
        xOffset,
        // Side by side, never stacked (a stack would also start log bars at 0).
        y: { field: 'value', stack: null, ...y },
        color: {
          field: 'series',
          type: 'nominal',
          sort: c.series.map((s) => s.name),
          scale: { range: COLOURS },
          legend: { title: null, orient: 'top', direction: 'horizontal', labelLimit: PLOT_WIDTH },
        },
        description: { field: 'label' },
      },
    },
  ];
  if (rows.some((r) => r.lo !== undefined))
    layers.push({
      name: 'whiskers',
      transform: [{ filter: 'isValid(datum.lo)' }],
      mark: { type: 'rule', color: '#222', strokeWidth: 1.5, aria: false },
      encoding: { x, xOffset, y: { field: 'lo', ...y }, y2: { field: 'hi' } },
    });
  if (c.reference) {
    const at = { datum: c.reference.value, ...y };
    layers.push(
      {
        name: 'reference',
        data: { values: [{}] },
        mark: { type: 'rule', color: REFERENCE_COLOUR, strokeWidth: 1.5, strokeDash: [6, 4] },
        encoding: { y: at },
      },
      {
        name: 'reference_label',
        data: { values: [{}] },
        // Right of the plot, where no bar or whisker can hide it.
        mark: { type: 'text', color: REFERENCE_COLOUR, align: 'left', baseline: 'middle', fontSize: 12 },
        encoding: { x: { value: PLOT_WIDTH + 6 }, y: at, text: { value: c.reference.label } },
      },
    );
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: c.subtitle ? { text: c.title, subtitle: c.subtitle } : { text: c.title },
    width: PLOT_WIDTH,
    height: PLOT_HEIGHT,
    data: { values: rows },
    layer: layers,
    config: {
      background: '#ffffff',
      padding: 16,
      font: 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif',
      title: {
        anchor: 'start',
        fontSize: 18,
        fontWeight: 600,
        subtitleFontSize: 12,
        subtitleColor: '#444',
        offset: 12,
      },
      axis: { labelFontSize: 12, titleFontSize: 13, titleFontWeight: 'normal', gridColor: '#e3e3e3' },
      legend: { labelFontSize: 12, symbolType: 'square' },
      view: { stroke: null },
    },
  } as TopLevelSpec;
}

/**
 * Compiles `spec` with Vega-Lite and renders it with Vega, headless.
 * @returns a standalone SVG document (with `xmlns`, width and height).
 * @throws Error from Vega-Lite or Vega when the specification is invalid.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** {@link barChartSpec} rendered by {@link renderSvg}. */
export function barChart(c: BarChartSpec): Promise<string> {
  return renderSvg(barChartSpec(c));
}
