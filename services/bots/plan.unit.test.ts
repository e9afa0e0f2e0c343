import { describe, expect, it } from 'vitest';
import { GAME_SLUGS } from '../../rules/games/catalog.ts';
import { pauseMs, planBet } from './plan.ts';

/** A deterministic [0, 1) sequence (mulberry32) so the test sees the same bets every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('planBet', () => {
  it('stakes whole cents from 0.10 to 5.00 with a valid selection for every game', () => {
    const random = seeded(7);
    const seen = new Map<string, Set<string>>();
    for (let i = 0; i < 4000; i++) {
      const game = GAME_SLUGS[i % GAME_SLUGS.length] ?? 'crash';
      const bet = planBet(game, random);
      expect(bet.amount).toBeGreaterThanOrEqual(0.1);
      expect(bet.amount).toBeLessThanOrEqual(5);
      expect(Math.round(bet.amount * 100) / 100).toBe(bet.amount);
      const key = JSON.stringify(bet.selection);
      seen.set(game, (seen.get(game) ?? new Set()).add(key));
    }
    expect([...(seen.get('crash') ?? [])].map((s) => JSON.parse(s).auto_cashout).sort()).toEqual([
      '1.20',
      '1.50',
      '10.00',
      '2.00',
      '3.00',
      '5.00',
    ]);
    expect([...(seen.get('double') ?? [])].sort()).toEqual([
      '{"color":"black"}',
      '{"color":"red"}',
      '{"color":"white"}',
    ]);
    expect([...(seen.get('wall-street') ?? [])].sort()).toEqual(['{"trend":"down"}', '{"trend":"up"}']);
    expect([...(seen.get('slot') ?? [])]).toEqual(['{}']);
  });

  it('keeps the extreme random values inside the ranges', () => {
    expect(planBet('crash', () => 0)).toEqual({ amount: 0.1, selection: { auto_cashout: '1.20' } });
    expect(planBet('crash', () => 0.999999)).toEqual({ amount: 5, selection: { auto_cashout: '10.00' } });
  });
});

describe('pauseMs', () => {
  it('spreads pauses from half to one and a half of the mean', () => {
    expect(pauseMs(4000, () => 0)).toBe(2000);
    expect(pauseMs(4000, () => 0.5)).toBe(4000);
    expect(pauseMs(4000, () => 0.999)).toBe(5996);
  });
});
