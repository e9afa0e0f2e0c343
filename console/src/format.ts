/**
 * Pure helpers of the console (no DOM, no clock, no fetch): routes, query strings, the download links,
 * number and time formatting, the error text of an API answer and the per-minute chart's geometry.
 * Unit-tested in format.unit.test.ts.
 */

/** A parsed hash route: the area (portal, ops or home), the page and its optional argument. */
export interface Route {
  readonly area: 'home' | 'portal' | 'ops';
  readonly page: string;
  /** The path segment after the page (a tx id, a dead-letter topic), decoded; '' when none. */
  readonly arg: string;
}

const PORTAL_PAGES = ['overview', 'callbacks', 'conformance', 'secret', 'settings', 'reconciliation'];
const OPS_PAGES = ['topics', 'groups', 'dead-letters', 'rebuilds', 'edges', 'keys', 'operators'];

/**
 * The route of a location hash (`#/portal/callbacks/42`, `#/ops/groups`); an unknown page of an area is
 * that area's first page, anything else the home page.
 */
export function parseRoute(hash: string): Route {
  const [area = '', page = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const arg = safeDecode(rest.join('/'));
  if (area === 'portal')
    return { area, page: PORTAL_PAGES.includes(page) ? page : 'overview', arg: page ? arg : '' };
  if (area === 'ops') return { area, page: OPS_PAGES.includes(page) ? page : 'topics', arg: page ? arg : '' };
  return { area: 'home', page: '', arg: '' };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The single-use portal link token of a hash `#portal-link=<token>`, or null when the hash holds none. */
export function linkTokenOf(hash: string): string | null {
  const m = /^#portal-link=([^&]+)/.exec(hash);
  return m?.[1] ? safeDecode(m[1]) : null;
}

/**
 * A query string (`?a=1&b=x`, '' when empty) of the fields that have a value: empty strings, null and
 * undefined are left out, so a blank search field filters nothing.
 */
export function queryOf(fields: Readonly<Record<string, string | number | null | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || v === null) continue;
    const s = String(v).trim();
    if (s !== '') q.set(k, s);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The reconciliation endpoint's URL for one day (`YYYY-MM-DD`) in the given format. */
export function reconciliationHref(date: string, format: 'csv' | 'json'): string {
  return `/api/portal/reconciliation${queryOf({ date, format })}`;
}

/** A latency in ms ("12 ms", "1.25 s"), '—' when there is none. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** A ratio 0..1 as a percentage with one decimal ("97.5 %"), '—' when there is none. */
export function formatRate(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '—';
  return `${(r * 100).toFixed(1)} %`;
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS` UTC (the log's and the API's clock), '—' when null or invalid. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * A minor-units amount with its currency ("12.50 EUR" for 1250 EUR, "1250 JPY" for 1250 JPY): the
 * currency's decimals from Intl (ISO 4217), the raw value when the amount or the code is not valid.
 */
export function formatMinor(minor: number | string, currency: string): string {
  const n = typeof minor === 'string' ? Number(minor) : minor;
  let decimals: number;
  try {
    decimals =
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ??
      2;
  } catch {
    return `${minor} ${currency}`;
  }
  if (!Number.isFinite(n)) return `${minor} ${currency}`;
  return `${(n / 10 ** decimals).toFixed(decimals)} ${currency}`;
}

/**
 * The text to show for a failed API answer: the body's `detail`, `message` or `error` (the API's error
 * body, RFC 9457 problem details), joined when both a title and a detail are given, with the status.
 * @param body the parsed JSON body, or the text when it was not JSON, or null when empty.
 */
export function errorMessage(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const str = (k: string) => (typeof b[k] === 'string' && b[k] !== '' ? (b[k] as string) : null);
    const head = str('error') ?? str('title');
    const detail = str('detail') ?? str('message');
    const text = head && detail && head !== detail ? `${head}: ${detail}` : (detail ?? head);
    if (text) return `${text} (HTTP ${status})`;
  }
  if (typeof body === 'string' && body.trim() !== '') return `${body.trim().slice(0, 300)} (HTTP ${status})`;
  return `The request failed (HTTP ${status})`;
}

/** A `datetime-local` input's value (local time) as an ISO instant, '' when empty or invalid. */
export function isoOfLocal(value: string, tzOffsetMinutes: number): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return '';
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, sec = 0] = m.slice(1).map((x) => Number(x ?? 0));
  const utc = Date.UTC(y, mo - 1, d, h, mi, sec) + tzOffsetMinutes * 60_000;
  return new Date(utc).toISOString();
}

/** One minute of callbacks, as GET /api/portal/overview gives it. */
export interface MinuteCount {
  readonly minute: string;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** One bar of the chart, in SVG user units (y grows downwards). */
export interface Bar {
  readonly minute: string;
  readonly x: number;
  readonly width: number;
  /** Succeeded part: top and height. */
  readonly okY: number;
  readonly okH: number;
  /** Failed part, stacked on the succeeded one. */
  readonly failY: number;
  readonly failH: number;
}

/**
 * The stacked bars of a per-minute chart in a `width` × `height` box: one slot per minute, the tallest
 * total reaching the top; the scale's maximum is returned for the axis label (at least 1).
 */
export function barsOf(
  minutes: readonly MinuteCount[],
  width: number,
  height: number,
): { bars: Bar[]; max: number } {
  const max = Math.max(1, ...minutes.map((m) => m.succeeded + m.failed));
  const slot = minutes.length > 0 ? width / minutes.length : width;
  const bars = minutes.map((m, i) => {
    const okH = (m.succeeded / max) * height;
    const failH = (m.failed / max) * height;
    return {
      minute: m.minute,
      x: i * slot + slot * 0.1,
      width: slot * 0.8,
      okY: height - okH,
      okH,
      failY: height - okH - failH,
      failH,
    };
  });
  return { bars, max };
}
