import { describe, expect, it } from 'vitest';
import { FaultInjector, faultRulesSchema } from './faults.ts';

describe('FaultInjector', () => {
  it('returns null without rules', () => {
    expect(new FaultInjector().take('bet')).toBeNull();
  });

  it('matches by kind, first rule wins, and a counted rule is dropped when spent', () => {
    const f = new FaultInjector();
    f.set([
      { kind: 'win', mode: 'error500', count: 2 },
      { mode: 'latency', latencyMs: 5 },
    ]);
    expect(f.take('bet')).toEqual({ mode: 'latency', latencyMs: 5 });
    expect(f.take('win')).toEqual({ mode: 'error500', latencyMs: 0 });
    expect(f.list()[0]).toMatchObject({ count: 1 });
    expect(f.take('win')?.mode).toBe('error500');
    expect(f.take('win')?.mode).toBe('latency');
    expect(f.list()).toEqual([{ mode: 'latency', latencyMs: 5 }]);
  });

  it('applies the mode default hold: 60 s for timeout, 1 s for latency', () => {
    const f = new FaultInjector();
    f.set([{ kind: 'bet', mode: 'timeout' }, { mode: 'latency' }]);
    expect(f.take('bet')).toEqual({ mode: 'timeout', latencyMs: 60_000 });
    expect(f.take('balance')).toEqual({ mode: 'latency', latencyMs: 1_000 });
  });

  it('a probabilistic rule fires only when random() < probability and is then counted', () => {
    const draws = [0.7, 0.2, 0.1];
    const f = new FaultInjector(() => draws.shift() ?? 1);
    f.set([{ mode: 'error500', probability: 0.5, count: 1 }]);
    expect(f.take('bet')).toBeNull();
    expect(f.take('bet')?.mode).toBe('error500');
    expect(f.take('bet')).toBeNull();
  });

  it("set copies the rules, so counting does not change the caller's objects", () => {
    const rules = [{ mode: 'error500' as const, count: 2 }];
    const f = new FaultInjector();
    f.set(rules);
    f.take('bet');
    expect(rules[0]?.count).toBe(2);
  });

  it('clear removes every rule', () => {
    const f = new FaultInjector();
    f.set([{ mode: 'error500' }]);
    f.clear();
    expect(f.take('bet')).toBeNull();
  });
});

describe('faultRulesSchema', () => {
  it('refuses unknown modes, kinds and fields, and out-of-range numbers', () => {
    for (const bad of [
      [{ mode: 'boom' }],
      [{ mode: 'latency', kind: 'deposit' }],
      [{ mode: 'latency', extra: 1 }],
      [{ mode: 'latency', latencyMs: 600_001 }],
      [{ mode: 'latency', count: 0 }],
      [{ mode: 'latency', probability: -0.1 }],
      { mode: 'latency' },
    ]) {
      expect(faultRulesSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(
      faultRulesSchema.safeParse([{ kind: 'rollback', mode: 'commit-then-drop', count: 3 }]).success,
    ).toBe(true);
  });
});
