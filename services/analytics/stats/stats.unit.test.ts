import { describe, expect, it } from 'vitest';
import { crash } from '../../../rules/games/crash.ts';
import { double } from '../../../rules/games/double.ts';
import { sampleBytes } from '../../../rules/games/sample.ts';
import { exactRtp, slot } from '../../../rules/games/slot.ts';
import { wallStreet } from '../../../rules/games/wall-street.ts';
import { CrashStats, parseCents, theoreticalQuantileCents } from './crash.ts';
import { colourProbabilities, DoubleStats } from './double.ts';
import { chiSquare, pValue, runsTest } from './fit.ts';
import { SlotStats } from './slot.ts';
import { WallStreetStats } from './wall-street.ts';

describe('chi-square and runs test', () => {
  it('gives Pearson statistic and the closed-form p-value for 2 degrees of freedom (e^(-x/2))', () => {
    const f = chiSquare([20, 65, 65], [1, 7, 7]);
    expect(f?.statistic).toBeCloseTo(10 + 50 / 70, 10);
    expect(f?.df).toBe(2);
    expect(f?.p_value).toBeCloseTo(Math.exp(-(10 + 50 / 70) / 2), 10);
    expect(chiSquare([10, 70, 70], [1 / 15, 7 / 15, 7 / 15])).toMatchObject({ statistic: 0, p_value: 1 });
  });

  it('p-value of 1 degree of freedom at 3.8415 is 0.05; of 14 at 23.685 is 0.05 (tables)', () => {
    expect(pValue(3.8415, 1)).toBeCloseTo(0.05, 4);
    expect(pValue(23.685, 14)).toBeCloseTo(0.05, 4);
  });

  it('flags low expected counts, handles impossible categories and refuses bad input', () => {
    expect(chiSquare([1, 2], [0.5, 0.5])?.low_expected).toBe(true);
    expect(chiSquare([3, 1], [1, 0])).toMatchObject({ statistic: Infinity, p_value: 0 });
    expect(chiSquare([0, 0], [1, 1])).toBeNull();
    expect(() => chiSquare([1], [1, 2])).toThrow(RangeError);
    expect(() => chiSquare([1, 2], [1, -1])).toThrow(RangeError);
  });

  it('runs test: expected runs 2·n1·n2/n + 1 and its z', () => {
    const t = runsTest(5, 3, 4);
    expect(t?.expected_runs).toBeCloseTo(4.75, 10);
    expect(t?.z).toBeCloseTo((4 - 4.75) / Math.sqrt((3.75 * 2.75) / 7), 10);
    expect(runsTest(5, 0, 1)).toBeNull();
  });
});

describe('crash statistics', () => {
  const points = ['1.00', '1.00', '1.50', '2.00', '2.50', '3.00', '150.00', '12345.67'];
  const s = new CrashStats();
  for (const p of [...points, 'x', '0.99', '1.5']) s.add(p);
  const sum = s.summary();

  it('counts rounds, refuses malformed points and keeps the maximum', () => {
    expect(sum).toMatchObject({ rounds: 8, invalid: 3, max_point: '12345.67' });
    expect(parseCents('2.31')).toBe(231);
    expect(parseCents('0.50')).toBeNull();
  });

  it('gives nearest-rank percentiles, exact below 100x and a bucket lower edge above', () => {
    const byP = Object.fromEntries(sum.percentiles.map((p) => [p.p, p]));
    expect(byP[50]).toMatchObject({ point: '2.00', exact: true, theoretical: '1.98' });
    expect(byP[10]).toMatchObject({ point: '1.00', exact: true });
    expect(byP[90]).toMatchObject({ point: '12300.00', exact: false });
    expect(theoreticalQuantileCents(0.99)).toBe(9900);
  });

  it('buckets the distribution and compares with P(point ≥ x) = 0.99/x', () => {
    const counts = Object.fromEntries(sum.buckets.map((b) => [b.from, b.count]));
    expect(counts).toMatchObject({
      '1.00': 2,
      '1.01': 0,
      '1.50': 1,
      '2.00': 2,
      '3.00': 1,
      '100.00': 1,
      '1000.00': 1,
    });
    expect(sum.buckets.reduce((a, b) => a + b.share, 0)).toBeCloseTo(1, 12);
    expect(sum.buckets.reduce((a, b) => a + b.theoretical, 0)).toBeCloseTo(1, 12);
    expect(sum.buckets[0]?.theoretical).toBeCloseTo(1 - 0.99 / 1.01, 12);
    expect(sum.instant_bust).toEqual({ share: 2 / 8, theoretical: 1 - 0.99 / 1.01 });
  });

  it('measures the house edge at each cash-out target: 1 − x · P(point ≥ x)', () => {
    const at2 = sum.house_edge.find((e) => e.target === 2);
    expect(at2?.edge).toBeCloseTo(1 - 2 * (5 / 8), 12);
    expect(at2?.theoretical).toBe(0.01);
    expect(at2?.std_error).toBeCloseTo(2 * Math.sqrt((0.495 * 0.505) / 8), 12);
  });

  it('on the real game math, lands within 5 standard errors of the 1% edge and the 1.98 median', () => {
    const real = new CrashStats();
    for (let i = 0; i < 50_000; i++) real.add(crash(sampleBytes(i)).point);
    const r = real.summary();
    for (const e of r.house_edge) expect(Math.abs(e.edge - 0.01)).toBeLessThan(5 * e.std_error);
    const median = Number(r.percentiles.find((p) => p.p === 50)?.point);
    expect(Math.abs(median - 1.98)).toBeLessThan(0.05);
  });
});

describe('double statistics', () => {
  it('counts colours from the wheel and checks them against 1/15, 7/15, 7/15', () => {
    expect(colourProbabilities()).toEqual({ white: 1 / 15, red: 7 / 15, black: 7 / 15 });
    const s = new DoubleStats();
    for (let i = 0; i < 150; i++) s.add(i % 15 === 0 ? 'white' : i % 15 <= 7 ? 'red' : 'black', i % 15);
    s.add('white', 3); // slot 3 is red
    s.add('red', 15); // no slot 15
    const d = s.summary();
    expect(d).toMatchObject({ rounds: 150, invalid: 2 });
    expect(d.colours.map((c) => c.count)).toEqual([10, 70, 70]);
    expect(d.colour_fit).toMatchObject({ statistic: 0, df: 2, p_value: 1 });
    expect(d.numbers).toEqual(new Array(15).fill(10));
    expect(d.number_fit?.df).toBe(14);
  });

  it('rejects a biased wheel: white twice as often', () => {
    const s = new DoubleStats();
    for (let i = 0; i < 3000; i++) s.add(i % 15 === 0 ? 'white' : i % 15 <= 7 ? 'red' : 'black', i % 15);
    for (let i = 0; i < 200; i++) s.add('white', 0);
    expect(s.summary().colour_fit?.p_value).toBeLessThan(1e-6);
  });

  it('fits the real game math', () => {
    const s = new DoubleStats();
    for (let i = 0; i < 30_000; i++) {
      const r = double(sampleBytes(i));
      s.add(r.color, r.number);
    }
    expect(s.summary().colour_fit?.p_value).toBeGreaterThan(1e-4);
  });
});

describe('slot statistics', () => {
  it('computes the RTP as Σ multipliers / rounds beside the exact paytable RTP', () => {
    const s = new SlotStats();
    for (const m of ['0.00', '0.00', '3.00', '7.00', 'bad']) s.add(m);
    const sum = s.summary();
    expect(sum).toMatchObject({ rounds: 4, invalid: 1, rtp: 2.5 });
    expect(sum.theoretical_rtp).toBeCloseTo(31615 / 32768, 12);
    expect(sum.payouts.map((p) => p.multiplier)).toEqual([
      '500.00',
      '100.00',
      '40.00',
      '17.00',
      '10.00',
      '7.00',
      '3.00',
      '0.00',
    ]);
    const three = sum.payouts.find((p) => p.multiplier === '3.00');
    expect(three).toMatchObject({ count: 1, share: 0.25, rtp_share: 0.75 });
    expect(sum.payouts.reduce((a, p) => a + p.theoretical_rtp_share, 0)).toBeCloseTo(exactRtp(), 12);
    expect(sum.z).toBeCloseTo((2.5 - exactRtp()) / sum.std_error, 12);
  });

  it('lists a payout the paytable cannot produce with probability 0', () => {
    const s = new SlotStats();
    s.add('2.00');
    expect(s.summary().payouts.find((p) => p.multiplier === '2.00')).toMatchObject({
      count: 1,
      theoretical: 0,
    });
    expect(s.summary().payout_fit?.p_value).toBe(0);
  });

  it('on the real game math, the RTP is within 5 standard errors of 96.48%', () => {
    const s = new SlotStats();
    for (let i = 0; i < 50_000; i++) s.add(slot(sampleBytes(i)).multiplier);
    const sum = s.summary();
    expect(Math.abs(sum.z)).toBeLessThan(5);
  });
});

describe('wall-street statistics', () => {
  it('counts up/down, streaks by length and the longest streak with its round ids', () => {
    const s = new WallStreetStats();
    const seq = ['up', 'up', 'down', 'up', 'up', 'up', 'down', 'down'];
    seq.forEach((t, i) => {
      s.add(t, 100 + i);
    });
    s.add('sideways', 999);
    const w = s.summary();
    expect(w).toMatchObject({ rounds: 8, invalid: 1, up: 5, down: 3, longest_up: 3, longest_down: 2 });
    expect(w.longest).toEqual({ trending: 'up', length: 3, from_round_id: 103, to_round_id: 105 });
    expect(w.streaks).toEqual([
      { length: 1, count: 1, expected: 2 },
      { length: 2, count: 2, expected: 1 },
      { length: 3, count: 1, expected: 0.5 },
    ]);
    expect(w.runs_test?.runs).toBe(4);
    // The open streak is counted in the summary without closing it: a later round extends it.
    s.add('down', 108);
    expect(s.summary().longest_down).toBe(3);
  });

  it('on the real game math, shares and runs fit a fair coin', () => {
    const s = new WallStreetStats();
    for (let i = 0; i < 20_000; i++) s.add(wallStreet(sampleBytes(i)).trending, i);
    const w = s.summary();
    expect(w.fit?.p_value).toBeGreaterThan(1e-4);
    expect(w.runs_test?.p_value).toBeGreaterThan(1e-4);
  });
});
