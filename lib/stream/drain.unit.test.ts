import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeSpread } from './drain.ts';

describe('closeSpread', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('spreads closes evenly over the window', async () => {
    const at: number[] = [];
    const t0 = Date.now();
    const done = closeSpread([...Array(100).keys()], 1000, () => at.push(Date.now() - t0));
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(at).toHaveLength(100);
    expect(at[0]).toBe(0);
    expect(Math.max(...at)).toBeLessThan(1000);
    expect(Math.max(...at)).toBeGreaterThanOrEqual(900);
    // Roughly the same number in each tenth of the window.
    const tenths = Array(10).fill(0);
    for (const t of at) tenths[Math.floor(t / 100)]++;
    for (const n of tenths) expect(n).toBe(10);
  });

  it('closes everything at once with no window, and survives a throwing close', async () => {
    const seen: number[] = [];
    await closeSpread([1, 2, 3], 0, (i) => {
      seen.push(i);
      if (i === 2) throw new Error('already closed');
    });
    expect(seen).toEqual([1, 2, 3]);
  });
});
