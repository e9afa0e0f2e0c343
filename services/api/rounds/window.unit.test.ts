/**
 * The rounds window as pure code: given these rows, then these bodies (prefixes of one text), the
 * type windows merged from their games, the newest kept, a row held once.
 */
import { describe, expect, it } from 'vitest';
import type { RoundRow } from '../../../lib/db/rounds-read.ts';
import { gameBySlug } from '../../../rules/games/catalog.ts';
import { RoundsWindow } from './window.ts';

const T0 = Date.UTC(2026, 0, 1);
const crash = gameBySlug('crash');
const slot = gameBySlug('slot');

function row(gameId: number, seq: number, at = T0 + seq * 1000): RoundRow {
  const slug = gameId === 1 ? 'crash' : 'slot';
  return {
    round_id: gameId * 1e12 + seq,
    game_id: gameId,
    game_slug: slug,
    game_type: gameId === 1 ? 'multiplier' : 'slots',
    finished_at: new Date(at).toISOString(),
    value: `${seq}.00`,
    extras: JSON.stringify({ point: `${seq}.00` }),
    timestamp: at + 5,
  };
}

const ids = (body: string | undefined) =>
  (JSON.parse(body ?? 'null') as { round_id: number }[]).map((r) => r.round_id % 1e12);

describe('RoundsWindow', () => {
  if (!crash || !slot) throw new Error('catalogue');

  it('answers nothing while cold, then bodies newest first, each a prefix of the same rows', () => {
    const w = new RoundsWindow(5);
    w.replace(
      1,
      [1, 2, 3].map((s) => row(1, s)),
    );
    expect(w.latest(crash)).toBeUndefined();
    expect(w.history(crash, 2)).toBeUndefined();
    w.warm = true;
    expect(ids(w.history(crash, 2))).toEqual([3, 2]);
    expect(ids(w.history(crash, 1000))).toEqual([3, 2, 1]);
    expect(JSON.parse(w.latest(crash) as string)).toMatchObject({
      round_id: 1e12 + 3,
      game_id: 1,
      extras: '{"point":"3.00"}',
    });
    expect(w.history(slot, 10)).toBe('[]');
    expect(w.latest(slot)).toBeNull();
  });

  it('adds newer rows at the head, keeps the newest `capacity`, ignores a row it holds', () => {
    const w = new RoundsWindow(4);
    w.warm = true;
    w.replace(
      1,
      [1, 2].map((s) => row(1, s)),
    );
    expect(w.add(1, [row(1, 2)])).toBe(false);
    expect(w.add(1, [row(1, 4), row(1, 3), row(1, 5)])).toBe(true);
    expect(ids(w.history(crash, 10))).toEqual([5, 4, 3, 2]);
    expect(w.head(1)?.round_id).toBe(1e12 + 5);
  });

  it('orders ties of finish time by round id and merges the games of a type with it as game_type', () => {
    const w = new RoundsWindow(10);
    w.warm = true;
    w.replace(1, [row(1, 1, T0), row(1, 2, T0), row(1, 3, T0 + 3000)]);
    w.replace(3, [row(3, 1, T0 + 1000), row(3, 2, T0 + 4000)]);
    expect(ids(w.history(crash, 10))).toEqual([3, 2, 1]);
    const multiplier = JSON.parse(w.historyByType('multiplier', 10) as string) as {
      game_slug: string;
      round_id: number;
      game_type: string;
    }[];
    expect(multiplier.map((r) => [r.game_slug, r.round_id % 1e12])).toEqual([
      ['slot', 2],
      ['crash', 3],
      ['slot', 1],
      ['crash', 2],
      ['crash', 1],
    ]);
    expect(new Set(multiplier.map((r) => r.game_type))).toEqual(new Set(['multiplier']));
    w.add(3, [row(3, 3, T0 + 9000)]);
    expect((JSON.parse(w.historyByType('multiplier', 1) as string) as RoundRow[])[0]?.round_id).toBe(
      3e12 + 3,
    );
    expect(ids(w.historyByType('slots', 10))).toEqual([3, 2, 1]);
  });
});
