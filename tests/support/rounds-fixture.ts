/**
 * Hand-made rounds for tests and benchmarks (not a test file): valid RoundFinished values of
 * each game with a chosen sequence and value, and read-model rows written as the projector does.
 */
import type { Sql } from '../../lib/db/pool.ts';
import { Delivery } from '../../lib/stream/hub.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { extrasOf, type RoundFinished, type RoundResult, roundValue } from '../../rules/rounds/round.ts';

/** Unix ms of sequence 0; round `seq` finishes `seq` seconds later. */
export const T0 = Date.UTC(2025, 0, 1);

/**
 * A round of `game` with sequence `seq` (round_id = game_id × 10^12 + seq, docs/decisions/log-and-topics/0004-round-ids.md).
 * `value`: crash point or slot multiplier ("2.50"), double colour, wall-street trend.
 */
export function mkRound(game: GameSlug, seq: number, value: string): RoundFinished {
  const info = gameBySlug(game);
  if (!info) throw new Error(`unknown game ${game}`);
  const result: RoundResult =
    game === 'crash'
      ? { game, point: value }
      : game === 'slot'
        ? { game, reels: ['cherry', 'bell', 'seven'], multiplier: value }
        : game === 'double'
          ? { game, color: value as 'white' | 'red' | 'black', number: value === 'white' ? 0 : 3 }
          : { game, trending: value as 'up' | 'down' };
  return {
    type: 'RoundFinished',
    round_id: info.id * 1e12 + seq,
    game_id: info.id,
    game_slug: info.slug,
    game_type: info.type,
    finished_at: T0 + seq * 1000,
    result,
    proof: null,
  };
}

/** A hub delivery of `round`, appended 5 ms after it finished. */
export function deliveryOf(round: RoundFinished, offset = 0): Delivery {
  return new Delivery(round, round.finished_at + 5, 0, BigInt(offset));
}

/** Inserts `rounds` into the read models and moves `games.last_round`/`last_update`, as the projector. */
export async function insertRounds(sql: Sql, rounds: readonly RoundFinished[]): Promise<void> {
  for (const r of rounds) {
    const finished = new Date(r.finished_at);
    await sql`
      insert into rounds (game_id, round_id, game_slug, game_type, finished_at, value, extras, proof, appended_at)
      values (${r.game_id}, ${r.round_id}, ${r.game_slug}, ${r.game_type}, ${finished},
              ${roundValue(r.result)}, ${sql.json(extrasOf(r.result) as never)}, null,
              ${new Date(r.finished_at + 5)})`;
    await sql`
      update games set last_round = ${r.round_id}, last_update = ${finished}
      where id = ${r.game_id} and (last_round is null or last_round < ${r.round_id})`;
  }
}

/** A valid RoundFinished of game `i % 4` with sequence `seq` (no proof), finished at `at` ms. */
export function syntheticRound(i: number, seq: number, at: number): RoundFinished {
  const k = i % 4;
  const base = { type: 'RoundFinished', finished_at: at, proof: null } as const;
  switch (k) {
    case 0:
      return {
        ...base,
        round_id: 1e12 + seq,
        game_id: 1,
        game_slug: 'crash',
        game_type: 'multiplier',
        result: { game: 'crash', point: (1 + (seq % 500) / 100).toFixed(2) },
      };
    case 1:
      return {
        ...base,
        round_id: 2e12 + seq,
        game_id: 2,
        game_slug: 'double',
        game_type: 'color',
        result: {
          game: 'double',
          color: seq % 15 === 0 ? 'white' : seq % 15 <= 7 ? 'red' : 'black',
          number: seq % 15,
        },
      };
    case 2:
      return {
        ...base,
        round_id: 3e12 + seq,
        game_id: 3,
        game_slug: 'slot',
        game_type: 'slots',
        result: { game: 'slot', reels: ['cherry', 'bell', 'seven'], multiplier: '0.00' },
      };
    default:
      return {
        ...base,
        round_id: 4e12 + seq,
        game_id: 4,
        game_slug: 'wall-street',
        game_type: 'trending',
        result: { game: 'wall-street', trending: seq % 2 ? 'up' : 'down' },
      };
  }
}
