import { describe, expect, it } from 'vitest';
import { SAMPLE_SIZE, sampleBytes, tolerance } from './sample.ts';
import { WALL_STREET_BETTING_MS, wallStreet, wallStreetResultMs } from './wall-street.ts';

describe('wall street', () => {
  it('goes up when the first bit is 0 and down when it is 1', () => {
    expect(wallStreet(Buffer.from([0x7f])).trending).toBe('up');
    expect(wallStreet(Buffer.from([0x80])).trending).toBe('down');
    expect(() => wallStreet(Buffer.alloc(0))).toThrow(RangeError);
  });

  it('is deterministic and lasts 10 s', () => {
    expect(wallStreet(sampleBytes(3))).toEqual(wallStreet(sampleBytes(3)));
    expect(WALL_STREET_BETTING_MS + wallStreetResultMs({ game: 'wall-street', trending: 'up' })).toBe(10_000);
  });

  it('is 50/50 over 200k rounds', () => {
    let up = 0;
    for (let i = 0; i < SAMPLE_SIZE; i++) if (wallStreet(sampleBytes(i)).trending === 'up') up++;
    expect(Math.abs(up / SAMPLE_SIZE - 0.5)).toBeLessThan(tolerance(0.5, SAMPLE_SIZE));
  });
});
