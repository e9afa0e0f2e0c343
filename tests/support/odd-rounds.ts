/**
 * The odd records of the `rounds` topic that every reader must survive (not a test file): a game's
 * rounds as the engine appends them (RoundOpened, BettingClosed, RoundFinished), with, between the
 * first three and the rest, what another producer left on the topic: a round 4 ids ahead of the
 * engine finished 10 minutes in the future (the record that froze the REST window and made the
 * streams skip the engine's rounds), one finished in year 0, the engine's last round again (a
 * duplicate), the same round id with another result (a conflict) and a round of a lower id than the
 * engine's (out of order). Readers refuse the first four (rules/rounds/admission.ts) and take the
 * out-of-order one as a round like any other.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundEvent, RoundFinished } from '../../rules/rounds/round.ts';
import { sampleRound } from './projector.ts';
import { lifecycleOf } from './rounds-client.ts';

/** 10 minutes: how far in the future the round that was found had finished. */
export const FUTURE_LEAD_MS = 600_000;

export interface OddScenario {
  /** The engine's first three rounds with their lifecycle events. */
  readonly before: RoundEvent[];
  /** The odd records, in the order appended. */
  readonly odd: {
    readonly future: RoundFinished;
    readonly past: RoundFinished;
    readonly duplicate: RoundFinished;
    readonly conflict: RoundFinished;
    readonly outOfOrder: RoundFinished;
  };
  /** The engine's next six rounds with their lifecycle events (one of them has the future round's id). */
  readonly after: RoundEvent[];
  /** The engine's rounds of `before` and `after`, in order. */
  readonly engine: RoundFinished[];
  /** Every record in the order to append. */
  readonly all: RoundEvent[];
}

/**
 * The scenario of `game` whose engine rounds have sequences `first` … `first + 8`, finished at
 * `now` + i ms (so appended just after: the time rule admits them).
 */
export function oddScenario(game: GameSlug, first: number, now = Date.now()): OddScenario {
  const engine = Array.from({ length: 9 }, (_, i) => sampleRound(game, first + i, now + i));
  const withLifecycle = (rounds: readonly RoundFinished[]): RoundEvent[] =>
    rounds.flatMap((r) => [...lifecycleOf(r), r]);
  const last = engine[2] as RoundFinished;
  const base = sampleRound(game, first + 6, now + FUTURE_LEAD_MS);
  const odd = {
    future: { ...base, result: otherResult(base) },
    past: sampleRound(game, first + 40, Date.parse('0000-01-01T00:00:00Z')),
    duplicate: last,
    conflict: { ...last, result: otherResult(last) },
    outOfOrder: sampleRound(game, first - 5, now - 30_000),
  };
  const before = withLifecycle(engine.slice(0, 3));
  const after = withLifecycle(engine.slice(3));
  return {
    before,
    odd,
    after,
    engine,
    all: [...before, odd.future, odd.past, odd.duplicate, odd.conflict, odd.outOfOrder, ...after],
  };
}

/** A result of `r`'s game that differs from its own. */
function otherResult(r: RoundFinished): RoundFinished['result'] {
  switch (r.result.game) {
    case 'crash':
      return { game: 'crash', point: '999.00' };
    case 'double':
      return { game: 'double', color: r.result.color === 'white' ? 'red' : 'white', number: 0 };
    case 'slot':
      return { game: 'slot', reels: ['odd', 'odd', 'odd'], multiplier: '999.00' };
    case 'wall-street':
      return { game: 'wall-street', trending: r.result.trending === 'up' ? 'down' : 'up' };
  }
}
