/**
 * Sample rounds for tests and examples: a valid round of any game with a given sequence and finish
 * time, and the lifecycle events an engine would append before it. Pure; the results are plausible,
 * not drawn from a hash chain (rules/rounds/decider.ts makes real ones).
 */
import { type GameSlug, gameBySlug } from '../games/catalog.ts';
import type { BettingClosed, RoundFinished, RoundOpened, RoundResult } from './round.ts';

const RESULTS: Record<GameSlug, (seq: number) => RoundResult> = {
  crash: (seq) => ({ game: 'crash', point: `${1 + (seq % 50)}.${String(seq % 100).padStart(2, '0')}` }),
  double: (seq) => {
    const n = seq % 15;
    return { game: 'double', color: n === 0 ? 'white' : n <= 7 ? 'red' : 'black', number: n };
  },
  slot: (seq) => ({ game: 'slot', reels: ['seven', 'bar', 'cherry'], multiplier: `${seq % 10}.00` }),
  'wall-street': (seq) => ({ game: 'wall-street', trending: seq % 2 === 0 ? 'up' : 'down' }),
};

/** A valid round of `game` with sequence `seq` (round_id = game_id·10¹² + seq), finished at `finishedAt` (Unix ms). */
export function sampleRound(game: GameSlug, seq: number, finishedAt: number): RoundFinished {
  const info = gameBySlug(game);
  if (!info) throw new Error(`unknown game ${game}`);
  return {
    type: 'RoundFinished',
    round_id: info.id * 1_000_000_000_000 + seq,
    game_id: info.id,
    game_slug: info.slug,
    game_type: info.type,
    finished_at: finishedAt,
    result: RESULTS[game](seq),
    proof:
      seq % 2 === 0
        ? { hash: 'ab'.repeat(32), chain_epoch: 0, chain_index: seq, commitment: 'cd'.repeat(32) }
        : null,
  };
}

/** The RoundOpened and BettingClosed events of `round`, before its finish. */
export function lifecycleOf(round: RoundFinished, speed = 1): [RoundOpened, BettingClosed] {
  const opens = round.finished_at - 10_000;
  return [
    {
      type: 'RoundOpened',
      round_id: round.round_id,
      game_id: round.game_id,
      game_slug: round.game_slug,
      game_type: round.game_type,
      betting_opens_at: opens,
      betting_closes_at: opens + 5_000,
      chain_epoch: 1,
      chain_index: round.round_id % 1_000_000,
      commitment: 'ab'.repeat(32),
      speed,
    },
    {
      type: 'BettingClosed',
      round_id: round.round_id,
      game_id: round.game_id,
      game_slug: round.game_slug,
      at: opens + 5_000,
    },
  ];
}
