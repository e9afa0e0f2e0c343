/**
 * A small SVG template for grouped bar charts: title, subtitle, y axis with grid lines and tick
 * labels (linear or log10), category labels on the x axis, axis titles, a legend, optional error
 * whiskers and a dashed reference line. Pure string building: no browser, no DOM.
 *
 * Every bar carries `data-series`, `data-category` and `data-value`, so tests (and scripts) can
 * read the numbers back from the file.
 */

export interface Series {
  readonly name: string;
  readonly values: readonly number[];
  /** Half-width of an error whisker per value (same unit), drawn when given. */
  readonly errors?: readonly number[];
}

export interface BarChartSpec {
  readonly title: string;
  readonly subtitle?: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly categories: readonly string[];
  readonly series: readonly Series[];
  /** Tick label of a y value (default: up to 4 significant digits). */
  readonly yFormat?: (v: number) => string;
  /** log10 for counts spanning decades; values ≤ 0 then draw no bar. */
  readonly scale?: 'linear' | 'log';
  /** A dashed horizontal line, e.g. the theoretical house edge. */
  readonly reference?: { readonly value: number; readonly label: string };
}

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9'];
const W = 860;
const H = 480;
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

/** Escapes text for SVG content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const defaultFormat = (v: number) =>
  Math.abs(v) >= 1e4 ? v.toExponential(1) : String(Number(v.toPrecision(4)));

/** 4 to 8 round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart). */
export function niceTicks(lo: number, hi: number): number[] {
  if (hi <= lo) hi = lo + 1;
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) as number) * mag;
  const ticks: number[] = [];
  // Integer multiples of the step, so 0 is exactly 0 (no -0 or 1e-17 labels).
  for (let k = Math.floor(lo / step); k <= Math.ceil(hi / step - 1e-9); k++)
    ticks.push(Number((k * step).toPrecision(12)) + 0);
  return ticks;
}

/** The chart as a standalone SVG document. */
export function barChart(spec: BarChartSpec): string {
  const { categories, series } = spec;
  const fmt = spec.yFormat ?? defaultFormat;
  const log = spec.scale === 'log';
  const longest = Math.max(1, ...categories.map((c) => c.length));
  const left = 84;
  const right = 24;
  const top = spec.subtitle ? 92 : 72;
  const plotW = W - left - right;
  const groupW = plotW / Math.max(1, categories.length);
  const rotate = longest * 7 > groupW - 4;
  const bottom = 56 + (rotate ? Math.min(longest, 18) * 5 : 0);
  const plotH = H - top - bottom;

  const all = series.flatMap((s) =>
    s.values.flatMap((v, i) => [v - (s.errors?.[i] ?? 0), v + (s.errors?.[i] ?? 0)]),
  );
  if (spec.reference) all.push(spec.reference.value);
  const finite = all.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let ticks: number[];
  let y: (v: number) => number;
  if (log) {
    const lo = Math.floor(Math.log10(Math.min(1, ...finite)));
    const hi = Math.ceil(Math.log10(Math.max(10, ...finite)));
    ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
    y = (v) => top + plotH - ((Math.log10(v) - lo) / (hi - lo)) * plotH;
  } else {
    ticks = niceTicks(Math.min(0, ...finite), Math.max(0, ...finite));
    const [lo, hi] = [ticks[0] as number, ticks.at(-1) as number];
    y = (v) => top + plotH - ((v - lo) / (hi - lo)) * plotH;
  }
  const base = log ? top + plotH : y(Math.max(ticks[0] as number, Math.min(0, ticks.at(-1) as number)));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12">`,
    `<title>${esc(spec.title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${left}" y="30" font-size="18" font-weight="600" fill="#111">${esc(spec.title)}</text>`,
  ];
  if (spec.subtitle)
    out.push(`<text x="${left}" y="52" font-size="12" fill="#444">${esc(spec.subtitle)}</text>`);
  // Legend, right-aligned above the plot.
  let lx = W - right;
  for (let i = series.length - 1; i >= 0; i--) {
    const name = (series[i] as Series).name;
    lx -= name.length * 7 + 26;
    out.push(
      `<g class="legend"><rect x="${lx}" y="${top - 22}" width="12" height="12" fill="${COLOURS[i % COLOURS.length]}"/>`,
      `<text x="${lx + 17}" y="${top - 12}" fill="#222">${esc(name)}</text></g>`,
    );
  }
  // Grid and y ticks.
  for (const t of ticks) {
    const ty = y(t).toFixed(1);
    out.push(
      `<line x1="${left}" x2="${W - right}" y1="${ty}" y2="${ty}" stroke="#e3e3e3"/>`,
      `<text x="${left - 8}" y="${ty}" dy="4" text-anchor="end" fill="#333">${esc(fmt(t))}</text>`,
    );
  }
  // Bars.
  const barW = (groupW * 0.8) / Math.max(1, series.length);
  series.forEach((s, k) => {
    out.push(`<g class="series" data-series="${esc(s.name)}" fill="${COLOURS[k % COLOURS.length]}">`);
    s.values.forEach((v, i) => {
      const x = left + i * groupW + groupW * 0.1 + k * barW;
      const cat = esc(categories[i] ?? '');
      const drawable = Number.isFinite(v) && (!log || v > 0);
      const yv = drawable ? y(v) : base;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${Math.min(yv, base).toFixed(1)}" width="${Math.max(1, barW - 2).toFixed(1)}" height="${Math.abs(base - yv).toFixed(1)}" data-category="${cat}" data-value="${v}"><title>${esc(`${s.name}, ${categories[i] ?? ''}: ${fmt(v)}`)}</title></rect>`,
      );
      const e = s.errors?.[i];
      if (e && drawable && !log) {
        const cx = (x + (barW - 2) / 2).toFixed(1);
        out.push(
          `<path d="M${cx} ${y(v - e).toFixed(1)}V${y(v + e).toFixed(1)}" stroke="#222" stroke-width="1.5"/>`,
        );
      }
    });
    out.push('</g>');
  });
  if (spec.reference) {
    const ry = y(spec.reference.value).toFixed(1);
    out.push(
      `<line class="reference" x1="${left}" x2="${W - right}" y1="${ry}" y2="${ry}" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`,
      `<text x="${W - right - 4}" y="${ry}" dy="-5" text-anchor="end" fill="#D55E00">${esc(spec.reference.label)}</text>`,
    );
  }
  // Axes, category labels and axis titles.
  out.push(
    `<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`,
    `<line x1="${left}" x2="${W - right}" y1="${base.toFixed(1)}" y2="${base.toFixed(1)}" stroke="#333"/>`,
  );
  categories.forEach((c, i) => {
    const cx = left + (i + 0.5) * groupW;
    const ly = top + plotH + 16;
    out.push(
      rotate
        ? `<text x="${cx.toFixed(1)}" y="${ly}" text-anchor="end" transform="rotate(-35 ${cx.toFixed(1)} ${ly})" fill="#333">${esc(c)}</text>`
        : `<text x="${cx.toFixed(1)}" y="${ly}" text-anchor="middle" fill="#333">${esc(c)}</text>`,
    );
  });
  out.push(
    `<text x="${left + plotW / 2}" y="${H - 12}" text-anchor="middle" font-size="13" fill="#111">${esc(spec.xLabel)}</text>`,
    `<text transform="translate(20 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="13" fill="#111">${esc(spec.yLabel)}${log ? ' (log scale)' : ''}</text>`,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}
