import { afterEach, describe, expect, it } from 'vitest';
import { holdSignals, onShutdown } from './lifecycle.ts';
import { createLogger } from './logger.ts';

const logger = createLogger('lifecycle-test', 'silent');
const before = { int: process.listeners('SIGINT'), term: process.listeners('SIGTERM') };

afterEach(() => {
  // Leave the test process's signal handling as it was.
  for (const l of process.listeners('SIGINT')) if (!before.int.includes(l)) process.off('SIGINT', l);
  for (const l of process.listeners('SIGTERM')) if (!before.term.includes(l)) process.off('SIGTERM', l);
});

describe('onShutdown', () => {
  // First: the module starts listening once, and afterEach removes the listeners again.
  it('runs the stop at once when a signal arrived during start-up', async () => {
    holdSignals(logger, 5000);
    process.emit('SIGTERM', 'SIGTERM');
    const codes: number[] = [];
    let stopped = false;
    onShutdown(
      logger,
      async () => {
        stopped = true;
      },
      { exit: (c) => codes.push(c) },
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(true);
    expect(codes).toEqual([0]);
  });

  it('runs stop once and exits 0 when it finishes', async () => {
    const codes: number[] = [];
    let stops = 0;
    const handle = onShutdown(
      logger,
      async () => {
        stops++;
        await new Promise((r) => setTimeout(r, 20));
      },
      { exit: (c) => codes.push(c) },
    );
    await Promise.all([handle('SIGTERM'), handle('SIGINT')]);
    expect(stops).toBe(1);
    expect(codes).toEqual([0]);
  });

  it('exits 1 when stop throws', async () => {
    const codes: number[] = [];
    const handle = onShutdown(
      logger,
      async () => {
        throw new Error('boom');
      },
      { exit: (c) => codes.push(c) },
    );
    await handle('SIGTERM');
    expect(codes).toEqual([1]);
  });

  it('exits 1 once the bound passes while stop still hangs', async () => {
    const codes: number[] = [];
    const started = Date.now();
    const handle = onShutdown(logger, () => new Promise<void>(() => {}), {
      timeoutMs: 100,
      exit: (c) => codes.push(c),
    });
    await handle('SIGTERM');
    expect(codes).toEqual([1]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  });
});
