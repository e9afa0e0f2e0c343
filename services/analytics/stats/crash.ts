/**
 * Crash statistics in constant memory: the distribution of crash points and the empirical house
 * edge, beside the game's theory (rules/games/crash.ts: P(point ≥ x) = 0.99 / x
 * for x ≥ 1.01, every point below 1.01 shows as 1.00).
 *
 * Memory: one count per cent below 100.00× (9,900 counts, so every percentile below 100× and
 * every share below it is exact), and above 100× one count per bucket of the first three
 * significant digits of the point in cents (width at most 1%, at most 900 buckets per decade).
 */
import { CRASH_HOUSE_EDGE } from '../../../rules/games/crash.ts';

/** Points below this many cents are counted exactly (100.00×). */
export const EXACT_LIMIT_CENTS = 10_000;
const MIN_CENTS = 100;
/** Cash-out targets (×) at which the house edge is measured. */
export const EDGE_TARGETS = [1.5, 2, 3, 5, 10, 100] as const;
/** Lower edges (cents) of the display buckets of the distribution; the last is open. */
export const BUCKET_EDGES_CENTS = [
  100, 101, 150, 200, 300, 500, 1_000, 2_000, 5_000, 10_000, 100_000,
] as const;
/** Percentiles reported (0..100). */
export const PERCENTILES = [10, 25, 50, 75, 90, 99, 99.9] as const;

const POINT = /^(\d{1,16})\.(\d{2})$/;

/** P(point ≥ cents / 100) in theory: 1 at 1.00, (1 − edge) · 100 / cents above. */
export function theoreticalAtLeast(cents: number): number {
  return cents <= MIN_CENTS ? 1 : Math.min(1, ((1 - CRASH_HOUSE_EDGE) * 100) / cents);
}

/** The q-quantile (0 ≤ q < 1) of the crash point in theory, in cents: floor(99 / (1 − q)), at least 100. */
export function theoreticalQuantileCents(q: number): number {
  return Math.max(MIN_CENTS, Math.floor(((1 - CRASH_HOUSE_EDGE) * 100) / (1 - q) + 1e-9));
}

/** Point in cents ("2.31" → 231), or null when it is not a decimal with two places ≥ 1.00. */
export function parseCents(point: string): number | null {
  const m = POINT.exec(point);
  if (!m) return null;
  const cents = Number(m[1]) * 100 + Number(m[2]);
  return Number.isSafeInteger(cents) && cents >= MIN_CENTS ? cents : null;
}

/** Lower edge of the tail bucket of `cents` (≥ EXACT_LIMIT_CENTS): its first three digits, then zeros. */
function tailKey(cents: number): number {
  const scale = 10 ** (String(cents).length - 3);
  return Math.floor(cents / scale) * scale;
}

const fmt = (cents: number) => (cents / 100).toFixed(2);

export interface CrashSummary {
  readonly game: 'crash';
  readonly rounds: number;
  /** Records whose point was not a two-place decimal ≥ 1.00 (not counted anywhere else). */
  readonly invalid: number;
  /** Largest point seen, e.g. "1523.07"; null without rounds. */
  readonly max_point: string | null;
  /** Crash point at each percentile; `exact` is false above 100× (bucket lower edge, within 1%). */
  readonly percentiles: readonly { p: number; point: string; exact: boolean; theoretical: string }[];
  /** Share of rounds per point bucket [from, to), observed and in theory. */
  readonly buckets: readonly {
    from: string;
    to: string | null;
    count: number;
    share: number;
    theoretical: number;
  }[];
  /** Busts at 1.00: observed share and theory (1 − 0.99 / 1.01 ≈ 1.98%). */
  readonly instant_bust: { readonly share: number; readonly theoretical: number };
  /**
   * House edge of a player who always cashes out at `target`: 1 − target · P(point ≥ target),
   * with its standard error under the theory; `theoretical` is the game's CRASH_HOUSE_EDGE.
   */
  readonly house_edge: readonly { target: number; edge: number; std_error: number; theoretical: number }[];
}

/** Accumulates crash points; `add` is O(1), memory is bounded (see the module comment). */
export class CrashStats {
  private readonly exact = new Float64Array(EXACT_LIMIT_CENTS - MIN_CENTS);
  private readonly tail = new Map<number, number>();
  private n = 0;
  private bad = 0;
  private maxCents = 0;

  /** Counts one round's point (the seed's decimal string). */
  add(point: string): void {
    const cents = parseCents(point);
    if (cents === null) {
      this.bad++;
      return;
    }
    this.n++;
    if (cents > this.maxCents) this.maxCents = cents;
    if (cents < EXACT_LIMIT_CENTS) (this.exact[cents - MIN_CENTS] as number)++;
    else {
      const k = tailKey(cents);
      this.tail.set(k, (this.tail.get(k) ?? 0) + 1);
    }
  }

  /** Rounds with a point ≥ `cents`; exact for any cents below 100× and at tail bucket edges. */
  private atLeast(cents: number): number {
    let below = 0;
    const top = Math.min(cents, EXACT_LIMIT_CENTS) - MIN_CENTS;
    for (let i = 0; i < top; i++) below += this.exact[i] as number;
    if (cents > EXACT_LIMIT_CENTS) for (const [k, c] of this.tail) if (k < cents) below += c;
    return this.n - below;
  }

  /** Nearest-rank percentile (0 < p ≤ 100). */
  private percentile(p: number): { point: string; exact: boolean } {
    const rank = Math.max(1, Math.ceil((p / 100) * this.n));
    let seen = 0;
    for (let i = 0; i < this.exact.length; i++) {
      seen += this.exact[i] as number;
      if (seen >= rank) return { point: fmt(i + MIN_CENTS), exact: true };
    }
    for (const k of [...this.tail.keys()].sort((a, b) => a - b)) {
      seen += this.tail.get(k) as number;
      if (seen >= rank) return { point: fmt(k), exact: false };
    }
    return { point: fmt(this.maxCents), exact: true };
  }

  summary(): CrashSummary {
    const n = this.n;
    const share = (c: number) => (n === 0 ? 0 : c / n);
    const buckets = BUCKET_EDGES_CENTS.map((from, i) => {
      const to = BUCKET_EDGES_CENTS[i + 1];
      const count = this.atLeast(from) - (to === undefined ? 0 : this.atLeast(to));
      const theoretical = theoreticalAtLeast(from) - (to === undefined ? 0 : theoreticalAtLeast(to));
      return {
        from: fmt(from),
        to: to === undefined ? null : fmt(to),
        count,
        share: share(count),
        theoretical,
      };
    });
    const house_edge = EDGE_TARGETS.map((target) => {
      const cents = Math.round(target * 100);
      const p = theoreticalAtLeast(cents);
      return {
        target,
        edge: n === 0 ? 0 : 1 - target * share(this.atLeast(cents)),
        std_error: n === 0 ? 0 : target * Math.sqrt((p * (1 - p)) / n),
        theoretical: CRASH_HOUSE_EDGE,
      };
    });
    return {
      game: 'crash',
      rounds: n,
      invalid: this.bad,
      max_point: n === 0 ? null : fmt(this.maxCents),
      percentiles:
        n === 0
          ? []
          : PERCENTILES.map((p) => ({
              p,
              ...this.percentile(p),
              theoretical: fmt(theoreticalQuantileCents(p / 100)),
            })),
      buckets,
      instant_bust: {
        share: share(n - this.atLeast(MIN_CENTS + 1)),
        theoretical: 1 - theoreticalAtLeast(MIN_CENTS + 1),
      },
      house_edge,
    };
  }
}
