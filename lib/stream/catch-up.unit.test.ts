import { describe, expect, it } from 'vitest';
import { round } from '../../tests/support/edge.ts';
import { type CatchUpCursor, CatchUpScheduler, END, memoryCursor } from './catch-up.ts';
import { Delivery } from './hub.ts';

const rounds = (n: number) =>
  Array.from({ length: n }, (_, i) => new Delivery(round('crash', i + 1), i, 0, BigInt(i)));

function job(cursor: CatchUpCursor, opts: { blocked?: () => boolean; gone?: () => boolean } = {}) {
  const got: Delivery[] = [];
  return {
    got,
    job: {
      cursor,
      emit: (d: Delivery) => got.push(d),
      blocked: opts.blocked ?? (() => false),
      gone: opts.gone ?? (() => false),
    },
  };
}

describe('CatchUpScheduler', () => {
  it('replays every round in order at no more than the rate per subscriber', async () => {
    const s = new CatchUpScheduler({ perSubscriberRate: 1000, totalRate: 1_000_000, sliceMs: 1 });
    const j = job(memoryCursor(rounds(300)));
    const t0 = performance.now();
    const r = await s.run(j.job);
    const ms = performance.now() - t0;
    expect(r).toEqual({ outcome: 'done', sent: 300 });
    expect(j.got.map((d) => d.offset)).toEqual(rounds(300).map((d) => d.offset));
    // 300 rounds at 1000/s with a burst of 50: at least 250 ms.
    expect(ms).toBeGreaterThanOrEqual(230);
  });

  it('shares the total rate between subscribers, in turn', async () => {
    const s = new CatchUpScheduler({ perSubscriberRate: 1_000_000, totalRate: 2000, sliceMs: 1 });
    const a = job(memoryCursor(rounds(200)));
    const b = job(memoryCursor(rounds(200)));
    const t0 = performance.now();
    let bAtA = -1;
    const both = Promise.all([
      s.run(a.job).then(() => {
        bAtA = b.got.length;
      }),
      s.run(b.job),
    ]);
    await both;
    // In turn: when one is done the other is nearly done too, not waiting to begin.
    expect(bAtA).toBeGreaterThanOrEqual(150);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(130); // 400 rounds at 2000/s, burst 100
  });

  it('waits while a subscriber is blocked, and ends when it is gone', async () => {
    const s = new CatchUpScheduler({ perSubscriberRate: 1_000_000, totalRate: 1_000_000, sliceMs: 1 });
    let blocked = true;
    const j = job(memoryCursor(rounds(100)), { blocked: () => blocked });
    const run = s.run(j.job);
    await new Promise((r) => setTimeout(r, 30));
    expect(j.got).toHaveLength(0);
    blocked = false;
    expect(await run).toEqual({ outcome: 'done', sent: 100 });

    let gone = false;
    const one = rounds(1)[0] as Delivery;
    const endless: CatchUpCursor = { next: () => one, load: async () => {} };
    const g = job(endless, { gone: () => gone });
    const running = s.run(g.job);
    await new Promise((r) => setTimeout(r, 5));
    gone = true;
    expect((await running).outcome).toBe('gone');
  });

  it('reports a read that fails', async () => {
    const s = new CatchUpScheduler({ perSubscriberRate: 1000, totalRate: 1000, sliceMs: 1 });
    const failing: CatchUpCursor = {
      next: () => null,
      load: async () => Promise.reject(new Error('broker down')),
    };
    const r = await s.run(job(failing).job);
    expect(r.outcome).toBe('failed');
    expect(r.error?.message).toBe('broker down');
  });

  it('yields the event loop at least every slice, however much there is to replay', async () => {
    const s = new CatchUpScheduler({ perSubscriberRate: 1e9, totalRate: 1e9, sliceMs: 2 });
    let n = 0;
    const one = rounds(1)[0] as Delivery;
    const busy: CatchUpCursor = {
      next: () => {
        if (n++ >= 3_000_000) return END;
        const until = performance.now() + 0.002; // some work per round
        while (performance.now() < until) {}
        return one;
      },
      load: async () => {},
    };
    const gaps: number[] = [];
    let last = performance.now();
    let pinging = true;
    const ping = () => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
      if (pinging) setTimeout(ping, 0);
    };
    setTimeout(ping, 0);
    const done = s.run(job(busy).job);
    await new Promise((r) => setTimeout(r, 300));
    pinging = false;
    s.stopAll();
    await done;
    gaps.sort((a, b) => a - b);
    console.info(
      `catch-up slices: ${gaps.length} timer turns in 300 ms, median gap ${gaps[gaps.length >> 1]?.toFixed(1)} ms, max ${gaps.at(-1)?.toFixed(1)} ms`,
    );
    // A timer (as a live round's fetch answer) waits about one slice, never the whole replay
    // (which would take seconds here). The bound is loose: the machine may be shared.
    expect(gaps.length).toBeGreaterThan(20);
    expect(gaps[gaps.length >> 1]).toBeLessThan(15);
  });
});
