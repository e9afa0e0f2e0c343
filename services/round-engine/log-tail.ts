/**
 * Reading the `rounds` topic from its end backwards: how the engine recovers each game's
 * position at start (the log is the source of truth, docs/decisions.md) and after a failed
 * send, and how the verify CLI finds a round by id.
 */
import type { Kafka } from 'kafkajs';
import { type ScanOptions, scanBackward } from '../../lib/log/rounds-log.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import { evolve, type GameState, initialState } from '../../rules/rounds/decider.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import { RoundNotFoundError } from './errors.ts';

/**
 * Each game's state from the log tail: the newest round (by round id) of each game, and for the
 * chain position the newest one carrying a proof. Games with no rounds get the initial state.
 */
export async function recoverStates(
  kafka: Kafka,
  topic: string,
  games: readonly GameSlug[],
  options: ScanOptions = {},
): Promise<Map<GameSlug, GameState>> {
  const wanted = new Set<string>(games);
  const last = new Map<GameSlug, RoundFinished>();
  const lastProved = new Map<GameSlug, RoundFinished>();
  const newer = (a: RoundFinished | undefined, b: RoundFinished) => !a || b.round_id > a.round_id;
  await scanBackward(
    kafka,
    topic,
    (round) => {
      if (round.type !== 'RoundFinished' || !wanted.has(round.game_slug)) return;
      if (newer(last.get(round.game_slug), round)) last.set(round.game_slug, round);
      if (round.proof && newer(lastProved.get(round.game_slug), round))
        lastProved.set(round.game_slug, round);
    },
    () => games.every((g) => lastProved.has(g)),
    options,
  );
  const states = new Map<GameSlug, GameState>();
  for (const g of games) {
    let s = initialState(g);
    const proved = lastProved.get(g);
    if (proved) s = evolve(s, proved);
    const newest = last.get(g);
    if (newest && newest !== proved) s = evolve(s, newest);
    states.set(g, s);
  }
  return states;
}

/**
 * The round `roundId` of `game` and, when it is in the log, the round just before it
 * (`roundId - 1`), for the chain link check.
 * @throws RoundNotFoundError when the round is not in the topic.
 */
export async function findRound(
  kafka: Kafka,
  topic: string,
  game: GameSlug,
  roundId: number,
  options: ScanOptions = {},
): Promise<{ round: RoundFinished; previous: RoundFinished | null }> {
  let round: RoundFinished | undefined;
  let previous: RoundFinished | undefined;
  let passed = false;
  await scanBackward(
    kafka,
    topic,
    (r) => {
      if (r.type !== 'RoundFinished' || r.game_slug !== game) return;
      if (r.round_id === roundId) round = r;
      else if (r.round_id === roundId - 1) previous = r;
      else if (r.round_id < roundId - 1) passed = true;
    },
    // Older rounds of the game come after both, so once one is seen neither can still appear.
    () => passed || (round !== undefined && previous !== undefined),
    options,
  );
  if (!round) throw new RoundNotFoundError(`round ${roundId} of ${game} is not in ${topic}`);
  return { round, previous: previous ?? null };
}
