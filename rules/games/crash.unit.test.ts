import { describe, expect, it } from 'vitest';
import { CRASH_HOUSE_EDGE, crash, crashDurationMs } from './crash.ts';
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

describe('crash duration', () => {
  it('is betting + flight ln(point)/0.00006 + cooldown, with the flight capped at 60 s', () => {
    expect(crashDurationMs({ game: 'crash', point: '1.00' })).toBe(8000);
    expect(crashDurationMs({ game: 'crash', point: '2.00' })).toBe(8000 + Math.round(Math.log(2) / 0.00006));
    expect(crashDurationMs({ game: 'crash', point: '1000000.00' })).toBe(68_000);
  });
});
