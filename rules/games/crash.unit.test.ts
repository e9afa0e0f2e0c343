import { describe, expect, it } from 'vitest';
import {
  CRASH_HOUSE_EDGE,
  centsToMultiplier,
  crash,
  crashFlightMs,
  multiplierCentsAt,
  pointCents,
} from './crash.ts';
import { SAMPLE_SIZE, sampleBytes, tolerance } from './sample.ts';

function bytes(...head: number[]): Buffer {
  const b = Buffer.alloc(32);
  Buffer.from(head).copy(b);
  return b;
}

describe('crash point', () => {
  it('follows floor(99 / (1 - X)) / 100 with X from the first 52 bits, at least 1.00', () => {
    expect(crash(bytes()).point).toBe('1.00'); // X = 0 → 0.99 → clamped
    expect(crash(bytes(0x80)).point).toBe('1.98'); // X = 1/2 → 99 / 0.5 = 198 cents
    expect(crash(bytes(0xc0)).point).toBe('3.96'); // X = 3/4
    expect(crash(bytes(0x03, 0xd7, 0x0a, 0x3d, 0x70, 0xa3, 0xd7)).point).toBe('1.00'); // X ≈ 0.015 → 1.005
    // X = 1 - 2^-52: the largest point, exact in integer arithmetic (99 * 2^52 cents).
    expect(crash(Buffer.alloc(32, 0xff)).point).toBe('4458563631096791.04');
    // Only the first 52 bits count: the low nibble of byte 6 and later bytes change nothing.
    expect(crash(bytes(0x80, 0, 0, 0, 0, 0, 0x0f, 0xff)).point).toBe('1.98');
  });

  it('is deterministic for the same input', () => {
    const b = sampleBytes(42);
    expect(crash(Buffer.from(b))).toEqual(crash(Buffer.from(b)));
  });

  const points = Array.from({ length: SAMPLE_SIZE }, (_, i) => Number(crash(sampleBytes(i)).point));
  const share = (pred: (p: number) => boolean) => points.filter(pred).length / points.length;

  it.each([1.5, 2, 10])('P(point >= %d) ≈ 0.99 / x over 200k rounds', (x) => {
    const expected = (1 - CRASH_HOUSE_EDGE) / x;
    expect(Math.abs(share((p) => p >= x) - expected)).toBeLessThan(tolerance(expected, SAMPLE_SIZE));
  });

  it('busts at 1.00 with probability 1 - 0.99 / 1.01 (≈ 1.98%: every point below 1.01 floors to 1.00)', () => {
    const expected = 1 - (1 - CRASH_HOUSE_EDGE) / 1.01;
    expect(Math.abs(share((p) => p === 1) - expected)).toBeLessThan(tolerance(expected, SAMPLE_SIZE));
  });

  it('keeps a house edge of about 1% for a player cashing out at 1.5x and at 2x', () => {
    for (const x of [1.5, 2]) {
      const p = (1 - CRASH_HOUSE_EDGE) / x;
      const edge = 1 - x * share((pt) => pt >= x);
      // The edge estimate's standard error is x times that of the proportion.
      expect(Math.abs(edge - CRASH_HOUSE_EDGE)).toBeLessThan(x * tolerance(p, SAMPLE_SIZE));
      expect(edge).toBeGreaterThan(0);
    }
  });
});

describe('crash flight', () => {
  it('lasts ceil(ln(point)/0.00006) ms, uncapped, so the multiplier always reaches the point', () => {
    expect(crashFlightMs({ game: 'crash', point: '1.00' })).toBe(0);
    expect(crashFlightMs({ game: 'crash', point: '2.00' })).toBe(Math.ceil(Math.log(2) / 0.00006));
    expect(crashFlightMs({ game: 'crash', point: '1000000.00' })).toBe(Math.ceil(Math.log(1e6) / 0.00006));
  });

  it('shows e^(0.00006 t) floored to the cent: 1.00 at the start, 2.00 after ln 2/0.00006 ms', () => {
    expect(multiplierCentsAt(0)).toBe(100);
    expect(multiplierCentsAt(Math.ceil(Math.log(2) / 0.00006))).toBe(200);
    expect(multiplierCentsAt(60_000)).toBe(Math.floor(100 * Math.exp(3.6)));
    expect(() => multiplierCentsAt(-1)).toThrow(RangeError);
  });

  it('stays below the point for every ms of flight before the bust, and reaches it at the bust', () => {
    for (const point of ['1.01', '1.37', '2.00', '6.00', '13.13', '100.00', '4321.99']) {
      const flight = crashFlightMs({ game: 'crash', point });
      const cents = pointCents(point);
      for (const t of [0, Math.floor(flight / 2), flight - 1].filter((x) => x >= 0 && x < flight))
        expect(multiplierCentsAt(t)).toBeLessThan(cents);
      expect(multiplierCentsAt(flight)).toBeGreaterThanOrEqual(cents);
    }
  });

  it('writes cents as a two-decimal string', () => {
    expect(centsToMultiplier(237)).toBe('2.37');
    expect(centsToMultiplier(100)).toBe('1.00');
    expect(pointCents('12.5')).toBe(1250);
  });
});
