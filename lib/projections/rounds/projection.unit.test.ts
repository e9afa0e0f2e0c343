import { describe, expect, it } from 'vitest';
import type { RoundFinished } from '../../../rules/rounds/round.ts';
import { sampleRound } from '../../../tests/support/projector.ts';
import { applyGameUpdate, type GameListState, type ProjectedEvent, projectRounds } from './projection.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const at = (round: RoundFinished, appendedAt = round.finished_at + 5): ProjectedEvent => ({
  round,
  appendedAt,
});

describe('projectRounds: given RoundFinished events, then rows', () => {
  it('maps each game to a history row with the seed value, extras JSON and proof', () => {
    const events = [
      at(sampleRound('crash', 2, T0)),
      at(sampleRound('double', 8, T0 + 1)),
      at(sampleRound('slot', 3, T0 + 2)),
      at(sampleRound('wall-street', 5, T0 + 3)),
    ];
    const { rows } = projectRounds(events);
    expect(rows).toEqual([
      {
        game_id: 1,
        round_id: 1_000_000_000_002,
        game_slug: 'crash',
        game_type: 'multiplier',
        finished_at: T0,
        value: '3.02',
        extras: '{"point":"3.02"}',
        proof: JSON.stringify({
          hash: 'ab'.repeat(32),
          chain_epoch: 0,
          chain_index: 2,
          commitment: 'cd'.repeat(32),
        }),
        appended_at: T0 + 5,
      },
      expect.objectContaining({
        game_slug: 'double',
        value: 'black',
        extras: '{"color":"black","number":8}',
      }),
      expect.objectContaining({
        game_slug: 'slot',
        game_type: 'slots',
        value: '3.00',
        extras: '{"reels":["seven","bar","cherry"],"multiplier":"3.00"}',
        proof: null,
      }),
      expect.objectContaining({ game_slug: 'wall-street', value: 'down', extras: '{"trending":"down"}' }),
    ]);
  });

  it('gives per game the largest round_id and the latest finished_at, independently', () => {
    const events = [
      at(sampleRound('crash', 10, T0 + 500)),
      at(sampleRound('crash', 12, T0 + 100)), // newer round with an earlier clock
      at(sampleRound('crash', 11, T0 + 300)),
      at(sampleRound('double', 1, T0)),
    ];
    expect(projectRounds(events).games).toEqual([
      { game_id: 1, last_round: 1_000_000_000_012, last_update: T0 + 500 },
      { game_id: 2, last_round: 2_000_000_000_001, last_update: T0 },
    ]);
  });

  it('keeps the first occurrence of a round repeated in the batch', () => {
    const first = sampleRound('crash', 4, T0);
    const again = { ...first, finished_at: T0 + 9, result: { game: 'crash', point: '9.99' } as const };
    const { rows } = projectRounds([at(first), at(sampleRound('crash', 5, T0 + 1)), at(again)]);
    expect(rows.map((r) => [r.round_id, r.value])).toEqual([
      [1_000_000_000_004, '5.04'],
      [1_000_000_000_005, '6.05'],
    ]);
  });

  it('projects an empty batch to nothing', () => {
    expect(projectRounds([])).toEqual({ rows: [], games: [] });
  });
});

describe('applyGameUpdate: the game list never moves backwards', () => {
  const empty: GameListState = { last_round: null, last_update: null };

  it('takes the first update of a game with no rounds yet', () => {
    expect(applyGameUpdate(empty, { game_id: 1, last_round: 7, last_update: T0 })).toEqual({
      last_round: 7,
      last_update: T0,
    });
  });

  it('ignores an older update replayed after a newer one', () => {
    const newer = applyGameUpdate(empty, { game_id: 1, last_round: 20, last_update: T0 + 20 });
    expect(applyGameUpdate(newer, { game_id: 1, last_round: 10, last_update: T0 + 10 })).toEqual(newer);
  });

  it('moves each field forward on its own', () => {
    const s = { last_round: 20, last_update: T0 + 20 };
    expect(applyGameUpdate(s, { game_id: 1, last_round: 21, last_update: T0 + 5 })).toEqual({
      last_round: 21,
      last_update: T0 + 20,
    });
  });

  it('gives the same state whatever order a replayed log arrives in', () => {
    const events = [3, 1, 4, 1, 5, 9, 2, 6].map((seq) => at(sampleRound('slot', seq, T0 + seq * 10)));
    const forward = projectRounds(events).games.reduce(applyGameUpdate, empty);
    const halves = [events.slice(4), events.slice(0, 4), events] // later half first, then a full replay
      .map((batch) => projectRounds(batch).games[0])
      .reduce<GameListState>((s, u) => (u ? applyGameUpdate(s, u) : s), empty);
    expect(halves).toEqual(forward);
    expect(forward).toEqual({ last_round: 3_000_000_000_009, last_update: T0 + 90 });
  });
});
