import { describe, expect, it } from 'vitest';
import { SAMPLE_SIZE, sampleBytes, tolerance } from './sample.ts';
import {
  exactRtp,
  payoutDistribution,
  payoutHundredths,
  SLOT_BETTING_MS,
  SYMBOLS,
  slot,
  slotResultMs,
} from './slot.ts';

/** 12 bytes whose reels stop at the given positions of the 32-stop strip. */
function stops(a: number, b: number, c: number): Buffer {
  const buf = Buffer.alloc(32);
  [a, b, c].forEach((s, k) => {
    buf.writeUInt32BE(s * 2 ** 27, 4 * k);
  });
  return buf;
}

describe('slot machine', () => {
  it('reads each reel from its own 4 bytes on the weighted strip', () => {
    // Strip: cherry 0-5, lemon 6-15, bell 16-22, bar 23-27, seven 28-30, diamond 31.
    expect(slot(stops(0, 0, 0))).toEqual({
      game: 'slot',
      reels: ['cherry', 'cherry', 'cherry'],
      multiplier: '10.00',
    });
    expect(slot(stops(31, 31, 31)).multiplier).toBe('500.00');
    expect(slot(stops(5, 6, 0))).toEqual({
      game: 'slot',
      reels: ['cherry', 'lemon', 'cherry'],
      multiplier: '3.00',
    });
    expect(slot(stops(16, 23, 28))).toEqual({
      game: 'slot',
      reels: ['bell', 'bar', 'seven'],
      multiplier: '0.00',
    });
    expect(slot(stops(0, 6, 16)).multiplier).toBe('0.00'); // one cherry pays nothing
    expect(slot(stops(28, 30, 29)).multiplier).toBe('100.00');
  });

  it('rejects short input and a wrong number of reels', () => {
    expect(() => slot(Buffer.alloc(11))).toThrow(RangeError);
    expect(() => payoutHundredths(['bar', 'bar'])).toThrow(RangeError);
  });

  it('is deterministic and lasts 5 s', () => {
    expect(slot(sampleBytes(9))).toEqual(slot(sampleBytes(9)));
    expect(SLOT_BETTING_MS + slotResultMs(slot(sampleBytes(9)))).toBe(5000);
  });

  it('has an exact RTP of about 96%, equal to the closed form of the paytable', () => {
    // Three of a kind: sum of weight^3 * pay; two cherries: 3 positions * 6^2 * 26 * 3.
    const closedForm =
      (1 * 500 + 27 * 100 + 125 * 40 + 343 * 17 + 216 * 10 + 1000 * 7 + 3 * 36 * 26 * 3) / 32 ** 3;
    expect(exactRtp()).toBeCloseTo(closedForm, 12);
    expect(exactRtp()).toBeGreaterThanOrEqual(0.94);
    expect(exactRtp()).toBeLessThanOrEqual(0.98);
    expect([...payoutDistribution().values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('pays on average exactRtp() and hits each payout as often as enumerated, over 200k spins', () => {
    const dist = payoutDistribution();
    const counts = new Map<number, number>();
    const symbolCounts = new Map<string, number>();
    let sum = 0;
    for (let i = 0; i < SAMPLE_SIZE; i++) {
      const r = slot(sampleBytes(i));
      const h = Math.round(Number(r.multiplier) * 100);
      sum += h / 100;
      counts.set(h, (counts.get(h) ?? 0) + 1);
      for (const s of r.reels) symbolCounts.set(s, (symbolCounts.get(s) ?? 0) + 1);
    }
    const rtp = exactRtp();
    let variance = 0;
    for (const [pay, p] of dist) variance += p * (pay / 100 - rtp) ** 2;
    // Mean of n draws: standard error sqrt(variance / n); five of them (≈ 0.06 here).
    expect(Math.abs(sum / SAMPLE_SIZE - rtp)).toBeLessThan(5 * Math.sqrt(variance / SAMPLE_SIZE));
    for (const [pay, p] of dist)
      expect(Math.abs((counts.get(pay) ?? 0) / SAMPLE_SIZE - p)).toBeLessThan(tolerance(p, SAMPLE_SIZE));
    for (const s of SYMBOLS) {
      const p = s.weight / 32;
      expect(Math.abs((symbolCounts.get(s.name) ?? 0) / (3 * SAMPLE_SIZE) - p)).toBeLessThan(
        tolerance(p, 3 * SAMPLE_SIZE),
      );
    }
  });
});
