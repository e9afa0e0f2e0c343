import { describe, expect, it } from 'vitest';
import { colorOf, DOUBLE_BETTING_MS, double, doubleResultMs } from './double.ts';
import { SAMPLE_SIZE, sampleBytes, tolerance } from './sample.ts';

describe('double wheel', () => {
  it('maps floor(X * 15) to the slot, 0 white, 1..7 red, 8..14 black', () => {
    expect(double(Buffer.alloc(32))).toEqual({ game: 'double', color: 'white', number: 0 });
    expect(double(Buffer.alloc(32, 0xff))).toEqual({ game: 'double', color: 'black', number: 14 });
    const half = Buffer.alloc(32);
    half[0] = 0x80; // X = 1/2 → 7.5 → 7
    expect(double(half)).toEqual({ game: 'double', color: 'red', number: 7 });
    expect([1, 7, 8, 14].map(colorOf)).toEqual(['red', 'red', 'black', 'black']);
  });

  it('rejects slots outside the wheel', () => {
    expect(() => colorOf(15)).toThrow(RangeError);
    expect(() => colorOf(-1)).toThrow(RangeError);
    expect(() => colorOf(1.5)).toThrow(RangeError);
  });

  it('is deterministic and lasts 15 s: 10 s of betting and a 5 s spin', () => {
    const r = double(sampleBytes(7));
    expect(double(sampleBytes(7))).toEqual(r);
    expect(DOUBLE_BETTING_MS + doubleResultMs(r)).toBe(15_000);
  });

  it('lands white 1/15, red 7/15, black 7/15, each slot 1/15, over 200k spins', () => {
    const byNumber = new Array<number>(15).fill(0);
    const byColor = { white: 0, red: 0, black: 0 };
    let mismatched = 0;
    for (let i = 0; i < SAMPLE_SIZE; i++) {
      const r = double(sampleBytes(i));
      byNumber[r.number] = (byNumber[r.number] ?? 0) + 1;
      byColor[r.color]++;
      if (r.color !== colorOf(r.number)) mismatched++;
    }
    expect(mismatched).toBe(0);
    const expected = { white: 1 / 15, red: 7 / 15, black: 7 / 15 };
    for (const c of ['white', 'red', 'black'] as const)
      expect(Math.abs(byColor[c] / SAMPLE_SIZE - expected[c])).toBeLessThan(
        tolerance(expected[c], SAMPLE_SIZE),
      );
    for (const count of byNumber)
      expect(Math.abs(count / SAMPLE_SIZE - 1 / 15)).toBeLessThan(tolerance(1 / 15, SAMPLE_SIZE));
  });
});
