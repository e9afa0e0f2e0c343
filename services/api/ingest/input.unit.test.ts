import { describe, expect, it } from 'vitest';
import { parseRoundPost } from './input.ts';

const at = '2026-11-22T00:00:00Z';
const seed = 'Ab'.repeat(32);

describe('parseRoundPost', () => {
  it.each([
    [
      { game_slug: 'crash', round_id: 1e12 + 1, finished_at: at, result: { point: '1.00' } },
      { game: 'crash', point: '1.00' },
    ],
    [
      { game_slug: 'double', round_id: 2e12 + 1, finished_at: at, result: { color: 'white', number: 0 } },
      { game: 'double', color: 'white', number: 0 },
    ],
    [
      { game_slug: 'double', round_id: 2e12 + 2, finished_at: at, result: { color: 'black', number: 14 } },
      { game: 'double', color: 'black', number: 14 },
    ],
    [
      {
        game_slug: 'slot',
        round_id: 3e12 + 1,
        finished_at: at,
        result: { reels: ['A', 'B', 'C'], multiplier: '1.50' },
      },
      { game: 'slot', reels: ['A', 'B', 'C'], multiplier: '1.50' },
    ],
    [
      {
        game_slug: 'wall-street',
        round_id: 4e12 + 1,
        finished_at: '2026-11-22T01:00:00.123+01:00',
        result: { trending: 'down' },
      },
      { game: 'wall-street', trending: 'down' },
    ],
  ])('accepts %j', (body, result) => {
    const r = parseRoundPost({ ...body, seed });
    expect(r.ok && r.value.round.result).toEqual(result);
    expect(r.ok && r.value.round.proof).toBeNull();
    expect(r.ok && r.value.seed).toBe('ab'.repeat(32));
  });

  it('reads finished_at with its offset as Unix ms', () => {
    const r = parseRoundPost({
      game_slug: 'wall-street',
      round_id: 4e12 + 1,
      finished_at: '2026-11-22T01:00:00.123+01:00',
      result: { trending: 'up' },
      seed,
    });
    expect(r.ok && r.value.round.finished_at).toBe(Date.parse('2026-11-22T00:00:00.123Z'));
  });

  it.each([
    ['not an object', [], /object/],
    ['unknown game', { game_slug: 'poker', round_id: 1, finished_at: at, result: {} }, /game_slug/],
    [
      'round id outside the game range',
      { game_slug: 'crash', round_id: 1e12, finished_at: at, result: { point: '2.00' } },
      /round_id/,
    ],
    [
      'fractional round id',
      { game_slug: 'crash', round_id: 1e12 + 0.5, finished_at: at, result: { point: '2.00' } },
      /round_id/,
    ],
    [
      'date without zone',
      {
        game_slug: 'crash',
        round_id: 1e12 + 1,
        finished_at: '2026-11-22T00:00:00',
        result: { point: '2.00' },
      },
      /finished_at/,
    ],
    [
      'impossible date',
      {
        game_slug: 'crash',
        round_id: 1e12 + 1,
        finished_at: '2026-13-45T00:00:00Z',
        result: { point: '2.00' },
      },
      /finished_at/,
    ],
    [
      'no seed',
      { game_slug: 'crash', round_id: 1e12 + 1, finished_at: at, result: { point: '2.00' } },
      /seed/,
    ],
    [
      'seed not 64 hex',
      {
        game_slug: 'crash',
        round_id: 1e12 + 1,
        finished_at: at,
        result: { point: '2.00' },
        seed: 'x'.repeat(64),
      },
      /seed/,
    ],
    [
      'crash point 1 decimal',
      { game_slug: 'crash', round_id: 1e12 + 1, finished_at: at, result: { point: '2.0' } },
      /point/,
    ],
    [
      'double number 15',
      { game_slug: 'double', round_id: 2e12 + 1, finished_at: at, result: { color: 'black', number: 15 } },
      /number/,
    ],
    [
      'double colour mismatch',
      { game_slug: 'double', round_id: 2e12 + 1, finished_at: at, result: { color: 'black', number: 3 } },
      /red/,
    ],
    [
      'slot without reels',
      { game_slug: 'slot', round_id: 3e12 + 1, finished_at: at, result: { reels: [], multiplier: '1.00' } },
      /reels/,
    ],
    [
      'wall-street sideways',
      { game_slug: 'wall-street', round_id: 4e12 + 1, finished_at: at, result: { trending: 'flat' } },
      /trending/,
    ],
  ])('refuses %s', (_n, body, pattern) => {
    const r = parseRoundPost(body);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(pattern);
  });
});
