/**
 * The benchmarks' latency figures (lib.ts latencySummary, by HdrHistogram) against the exact
 * nearest-rank percentiles of the same values.
 */
import { describe, expect, it } from 'vitest';
import { latencySummary } from './lib.ts';

/** Exact nearest-rank percentile, the definition the histogram approximates. */
function nearestRank(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

describe('latencySummary', () => {
  it('matches nearest-rank percentiles to 0.1 % and the maximum to the microsecond', () => {
    // Latency-like values from 0.05 ms to a few seconds, with a long tail (seeded, reproducible).
    let seed = 42;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const values = Array.from({ length: 20_000 }, () => 0.05 + 2 / (1 - next() * 0.999));
    const s = latencySummary(values);
    expect(s.n).toBe(values.length);
    for (const [got, p] of [
      [s.p50, 50],
      [s.p99, 99],
    ] as const) {
      const exact = nearestRank(values, p);
      expect(Math.abs(got - exact)).toBeLessThanOrEqual(exact * 0.001 + 0.001);
    }
    expect(s.max).toBeCloseTo(Math.max(...values), 3);
  });

  it('keeps sub-millisecond values to the microsecond, and a typed array is accepted', () => {
    const s = latencySummary(Float64Array.from([0.25, 0.5, 0.75, 1.0]));
    expect(s).toEqual({ n: 4, p50: 0.5, p99: 1, max: 1 });
  });

  it('never puts a percentile above the maximum, though buckets are rounded up', () => {
    // 86,612 µs falls in a 64 µs wide bucket whose top is 86,655 µs.
    expect(latencySummary([86.6123])).toEqual({ n: 1, p50: 86.612, p99: 86.612, max: 86.612 });
  });

  it('has no figures for no values', () => {
    const s = latencySummary([]);
    expect(s.n).toBe(0);
    expect([s.p50, s.p99, s.max].every(Number.isNaN)).toBe(true);
  });
});
