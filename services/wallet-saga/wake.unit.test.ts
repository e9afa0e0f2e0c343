/**
 * Waking the dispatcher's loop (wake.ts): passes run one at a time, wakes during a pass give one
 * more pass (not one each), a full page gives another at once, a pass's error is handed on, and
 * stop waits for the pass in progress and runs none after it.
 */
import { describe, expect, it } from 'vitest';
import { Waker } from './wake.ts';

/** A pass whose runs are counted and held until released one by one. */
function heldPass(full: (n: number) => boolean = () => false) {
  const state = { runs: 0, running: 0, most: 0, release: [] as Array<() => void> };
  const pass = async (): Promise<boolean> => {
    state.runs += 1;
    state.running += 1;
    state.most = Math.max(state.most, state.running);
    const n = state.runs;
    await new Promise<void>((r) => state.release.push(r));
    state.running -= 1;
    return full(n);
  };
  /** Lets the oldest held run end, then lets the waker go on. */
  const releaseOne = async () => {
    state.release.shift()?.();
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { state, pass, releaseOne };
}

const HOUR = 3_600_000;

describe('Waker', () => {
  it('runs nothing before start, one pass at start, and starts once', async () => {
    const { state, pass, releaseOne } = heldPass();
    const w = new Waker({ pass, pollMs: HOUR, stopped: () => false, failed: () => {} });
    w.wake();
    expect(state.runs).toBe(0);
    expect(w.start()).toBe(true);
    expect(w.start()).toBe(false);
    expect(state.runs).toBe(1);
    await releaseOne();
    await w.stop();
  });

  it('gives one more pass for any number of wakes during a pass, never two at once', async () => {
    const { state, pass, releaseOne } = heldPass();
    const w = new Waker({ pass, pollMs: HOUR, stopped: () => false, failed: () => {} });
    w.start();
    w.wake();
    w.wake();
    w.wake();
    await releaseOne();
    expect(state.runs).toBe(2);
    await releaseOne();
    expect(state.runs).toBe(2);
    expect(state.most).toBe(1);
    await w.stop();
  });

  it('runs again at once after a full page, until one is not full', async () => {
    const { state, pass, releaseOne } = heldPass((n) => n < 3);
    const w = new Waker({ pass, pollMs: HOUR, stopped: () => false, failed: () => {} });
    w.start();
    for (let i = 0; i < 4; i++) await releaseOne();
    expect(state.runs).toBe(3);
    await w.stop();
  });

  it('hands a pass error on, and the next wake runs a pass again', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const w = new Waker({
      pass: async () => {
        runs += 1;
        if (runs === 1) throw new Error('leasing failed');
        return false;
      },
      pollMs: HOUR,
      stopped: () => false,
      failed: (err) => errors.push(err),
    });
    w.start();
    await w.stop();
    expect(errors.map((e) => (e as Error).message)).toEqual(['leasing failed']);
    w.wake();
    await w.stop();
    expect(runs).toBe(2);
  });

  it('runs a pass every pollMs', async () => {
    let runs = 0;
    const w = new Waker({
      pass: async () => {
        runs += 1;
        return false;
      },
      pollMs: 10,
      stopped: () => false,
      failed: () => {},
    });
    w.start();
    await new Promise((r) => setTimeout(r, 200));
    await w.stop();
    expect(runs).toBeGreaterThanOrEqual(3);
  });

  it('at stop waits for the pass in progress, then runs no pass, woken or timed', async () => {
    let stopped = false;
    const { state, pass, releaseOne } = heldPass(() => true);
    const w = new Waker({ pass, pollMs: 5, stopped: () => stopped, failed: () => {} });
    w.start();
    stopped = true;
    let done = false;
    const stopping = w.stop().then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    await releaseOne();
    await stopping;
    expect(done).toBe(true);
    w.wake();
    await new Promise((r) => setTimeout(r, 50));
    expect(state.runs).toBe(1);
  });
});
