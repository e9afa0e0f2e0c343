import { describe, expect, it } from 'vitest';
import type { CallbackKind } from '../../rules/wallet/bodies.ts';
import { SendQueue } from './send-queue.ts';

/** A send that stays open until `release()`, recording when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => {
    release = r;
  });
  return {
    send: async () => {
      log.push(name);
      await done;
      return name;
    },
    release: () => release(),
  };
}

describe('SendQueue: who goes first to an operator', () => {
  it('sends debits, wins and rollbacks in arrival order, and a round end’s closes after them', async () => {
    const q = new SendQueue(1);
    const log: string[] = [];
    const first = gate(log, 'close-0');
    const running = q.run('op', 'close', first.send);
    const arrivals: Array<[CallbackKind, string]> = [
      ['close', 'close-1'],
      ['close', 'close-2'],
      ['win', 'win-1'],
      ['rollback', 'rollback-1'],
      ['win', 'win-2'],
      ['bet', 'bet-1'],
    ];
    const rest = arrivals.map(([kind, name]) =>
      q.run('op', kind, async () => {
        log.push(name);
        return name;
      }),
    );
    expect(q.waiting).toBe(6);
    first.release();
    await Promise.all([running, ...rest]);
    // The close already on the wire finishes; then what players wait on in arrival order; the closes.
    expect(log).toEqual(['close-0', 'win-1', 'rollback-1', 'win-2', 'bet-1', 'close-1', 'close-2']);
  });

  it('keeps at most `concurrency` sends open per operator, and operators apart', async () => {
    const q = new SendQueue(2);
    const log: string[] = [];
    const a = [gate(log, 'a1'), gate(log, 'a2'), gate(log, 'a3')];
    const b = gate(log, 'b1');
    const runs = [...a.map((g) => q.run('op-a', 'win', g.send)), q.run('op-b', 'win', b.send)];
    await new Promise((r) => setImmediate(r));
    expect(log.sort()).toEqual(['a1', 'a2', 'b1']);
    expect(q.waiting).toBe(1);
    a[0]?.release();
    await runs[0];
    await new Promise((r) => setImmediate(r));
    expect(log).toContain('a3');
    for (const g of [...a, b]) g.release();
    expect(await Promise.all(runs)).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('passes on what a send throws, and the next one still goes', async () => {
    const q = new SendQueue(1);
    const failing = q.run('op', 'bet', async () => {
      throw new Error('socket hang up');
    });
    await expect(failing).rejects.toThrow('socket hang up');
    await expect(q.run('op', 'bet', async () => 'ok')).resolves.toBe('ok');
  });

  it('refuses a concurrency below one', () => {
    expect(() => new SendQueue(0)).toThrow(/concurrency must be an integer >= 1/);
  });
});
