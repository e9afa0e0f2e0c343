import { describe, expect, it } from 'vitest';
import { type RoundFinished, toRestForm, toStreamForm } from './round.ts';

const base = { type: 'RoundFinished', finished_at: Date.UTC(2026, 10, 21, 12, 0, 0), proof: null } as const;
const samples: RoundFinished[] = [
  {
    ...base,
    round_id: 1_000_000_000_001,
    game_id: 1,
    game_slug: 'crash',
    game_type: 'multiplier',
    result: { game: 'crash', point: '2.31' },
    proof: { hash: 'a'.repeat(64), chain_epoch: 0, chain_index: 7, commitment: 'b'.repeat(64) },
  },
  {
    ...base,
    round_id: 2_000_000_000_001,
    game_id: 2,
    game_slug: 'double',
    game_type: 'color',
    result: { game: 'double', color: 'red', number: 3 },
  },
  {
    ...base,
    round_id: 3_000_000_000_001,
    game_id: 3,
    game_slug: 'slot',
    game_type: 'slots',
    result: { game: 'slot', reels: ['seven', 'seven', 'bar'], multiplier: '0.00' },
  },
  {
    ...base,
    round_id: 4_000_000_000_001,
    game_id: 4,
    game_slug: 'wall-street',
    game_type: 'trending',
    result: { game: 'wall-street', trending: 'up' },
  },
];

describe('public forms of a round (docs/contract.md)', () => {
  it('REST form carries value by game type', () => {
    expect(samples.map((r) => toRestForm(r).value)).toEqual(['2.31', 'red', '0.00', 'up']);
    expect(toRestForm(samples[0] as RoundFinished)).toEqual({
      game_slug: 'crash',
      game_type: 'multiplier',
      finished_at: '2026-11-21T12:00:00.000Z',
      value: '2.31',
    });
  });

  it('history by type reports the requested type (seed: slot reads multiplier)', () => {
    expect(toRestForm(samples[2] as RoundFinished, 'multiplier').game_type).toBe('multiplier');
  });

  it('stream form has extras as JSON text and the append timestamp in ms', () => {
    const s = toStreamForm(samples[1] as RoundFinished, 1_763_726_400_123);
    expect(s).toEqual({
      round_id: 2_000_000_000_001,
      game_id: 2,
      game_slug: 'double',
      game_type: 'color',
      finished_at: '2026-11-21T12:00:00.000Z',
      extras: '{"color":"red","number":3}',
      timestamp: 1_763_726_400_123,
    });
    expect(JSON.parse(toStreamForm(samples[2] as RoundFinished, 0).extras)).toEqual({
      reels: ['seven', 'seven', 'bar'],
      multiplier: '0.00',
    });
  });
});
