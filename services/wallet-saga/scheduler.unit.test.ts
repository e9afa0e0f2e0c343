import { describe, expect, it } from 'vitest';
import { KeyedScheduler } from './scheduler.ts';

/** A task that finishes when its `release` is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => {
    release = r;
  });
  return { release, task: () => done };
}
const tick = () => new Promise((r) => setImmediate(r));

function make(max = 10) {
  const marks: Array<[number, bigint]> = [];
  const errors: unknown[] = [];
  let capacity = 0;
  const s = new KeyedScheduler(max, {
    onError: (e) => errors.push(e),
    onWatermark: (p, n) => marks.push([p, n]),
    onCapacity: () => capacity++,
  });
  return { s, marks, errors, capacity: () => capacity };
}

describe('KeyedScheduler', () => {
  it('runs one key in order and other keys concurrently (no head-of-line blocking)', async () => {
    const { s } = make();
    const order: string[] = [];
    const slow = gate();
    s.admit(0, 0n, 'a', async () => {
      order.push('a0 start');
      await slow.task();
      order.push('a0 end');
    });
    s.admit(0, 1n, 'a', async () => {
      order.push('a1');
    });
    s.admit(0, 2n, 'b', async () => {
      order.push('b2');
    });
    await tick();
    expect(order).toEqual(['a0 start', 'b2']);
    slow.release();
    await s.idle();
    expect(order).toEqual(['a0 start', 'b2', 'a0 end', 'a1']);
  });

  it('keeps the watermark at the lowest unfinished offset', async () => {
    const { s, marks } = make();
    const g0 = gate();
    s.admit(0, 5n, 'a', g0.task);
    s.admit(0, 6n, 'b', async () => {});
    s.skip(0, 7n);
    await tick();
    expect(s.watermark(0)).toBe(5n);
    expect(marks.filter(([, n]) => n > 5n)).toEqual([]);
    g0.release();
    await s.idle();
    expect(s.watermark(0)).toBe(8n);
    expect(marks.at(-1)).toEqual([0, 8n]);
  });

  it('refuses admission at the bound and reports capacity when a slot frees', async () => {
    const { s, capacity } = make(2);
    const g = gate();
    expect(s.admit(1, 0n, 'a', g.task)).toBe(true);
    expect(s.admit(1, 1n, 'b', g.task)).toBe(true);
    expect(s.admit(1, 2n, 'c', async () => {})).toBe(false);
    expect(s.inFlight).toBe(2);
    expect(s.seen(1, 2n)).toBe(false);
    g.release();
    await s.idle();
    expect(capacity()).toBe(1);
    expect(s.admit(1, 2n, 'c', async () => {})).toBe(true);
    await s.idle();
    expect(s.watermark(1)).toBe(3n);
  });

  it('ignores a re-fetched offset and never passes a task that threw', async () => {
    const { s, errors } = make();
    let runs = 0;
    s.admit(0, 0n, 'a', async () => {
      runs++;
      throw new Error('boom');
    });
    expect(s.seen(0, 0n)).toBe(true);
    s.admit(0, 0n, 'a', async () => {
      runs++;
    });
    s.admit(0, 1n, 'b', async () => {});
    await s.idle();
    expect(runs).toBe(1);
    expect(errors).toHaveLength(1);
    expect(s.watermark(0)).toBe(0n);
  });

  it('forgets revoked partitions: their tasks no longer move a watermark', async () => {
    const { s, marks } = make();
    const g = gate();
    s.admit(2, 10n, 'a', g.task);
    s.resetPartitions(new Set([0]));
    g.release();
    await s.idle();
    expect(s.watermark(2)).toBeUndefined();
    expect(marks).toEqual([]);
  });

  it('refuses a bound below 1', () => {
    expect(() => make(0)).toThrow(RangeError);
  });
});
