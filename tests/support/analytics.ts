/**
 * Rounds for the analytics tests and benchmark, made the way the round engine makes them: the
 * engine's pure decider (rules/rounds/decider.ts) over real hash chains, so every proof
 * is genuine unless a test tampers with it.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import {
  type ChainSource,
  decide,
  evolve,
  type GameState,
  initialState,
} from '../../rules/rounds/decider.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';

/** Memoised chains of a seed with `length` rounds per epoch: the engine's own (decider.ts cachedChains). */
export { cachedChains as chainSource } from '../../rules/rounds/decider.ts';

/**
 * Generates rounds of `games` in turn (game i % games.length), finished `stepMs` apart from
 * `startMs`. Keeps each game's state between calls, so a long run can be produced in batches.
 */
export class RoundMaker {
  private readonly states: Map<GameSlug, GameState>;
  private i = 0;

  constructor(
    private readonly games: readonly GameSlug[],
    private readonly chains: ChainSource,
    private readonly startMs = Date.UTC(2026, 0, 1),
    private readonly stepMs = 1000,
  ) {
    this.states = new Map(games.map((g) => [g, initialState(g)]));
  }

  /** The next `count` rounds. */
  next(count: number): RoundFinished[] {
    const out: RoundFinished[] = [];
    for (let k = 0; k < count; k++, this.i++) {
      const game = this.games[this.i % this.games.length] as GameSlug;
      const round = decide(
        this.states.get(game) as GameState,
        this.chains,
        this.startMs + this.i * this.stepMs,
      );
      this.states.set(game, evolve(this.states.get(game) as GameState, round));
      out.push(round);
    }
    return out;
  }
}
