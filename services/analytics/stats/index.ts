/**
 * Per-game statistics of a stream of rounds: one accumulator per game, fed one round at a time
 * (constant memory whatever the number of rounds), summarised at the end.
 */
import type { GameSlug } from '../../../rules/games/catalog.ts';
import type { RoundFinished } from '../../../rules/rounds/round.ts';
import { CrashStats, type CrashSummary } from './crash.ts';
import { DoubleStats, type DoubleSummary } from './double.ts';
import { SlotStats, type SlotSummary } from './slot.ts';
import { WallStreetStats, type WallStreetSummary } from './wall-street.ts';

export type { CrashSummary, DoubleSummary, SlotSummary, WallStreetSummary };

export interface GameSummaries {
  crash?: CrashSummary;
  double?: DoubleSummary;
  slot?: SlotSummary;
  'wall-street'?: WallStreetSummary;
}

/** Time span and round ids of one game's rounds in the range. */
export interface Span {
  /** Unix ms of the earliest and latest finished_at seen. */
  readonly first_finished_at: number;
  readonly last_finished_at: number;
  readonly first_round_id: number;
  readonly last_round_id: number;
}

/** Folds rounds of the selected games into their accumulators. */
export class RoundStats {
  private readonly crash = new CrashStats();
  private readonly double = new DoubleStats();
  private readonly slot = new SlotStats();
  private readonly wallStreet = new WallStreetStats();
  private readonly spans = new Map<
    GameSlug,
    { first: number; last: number; firstId: number; lastId: number }
  >();

  /** @param games the games summarised; rounds of other games are ignored by the caller. */
  constructor(private readonly games: readonly GameSlug[]) {}

  add(round: RoundFinished): void {
    const r = round.result;
    const s = this.spans.get(round.game_slug);
    if (!s)
      this.spans.set(round.game_slug, {
        first: round.finished_at,
        last: round.finished_at,
        firstId: round.round_id,
        lastId: round.round_id,
      });
    else {
      if (round.finished_at < s.first) s.first = round.finished_at;
      if (round.finished_at > s.last) s.last = round.finished_at;
      if (round.round_id < s.firstId) s.firstId = round.round_id;
      if (round.round_id > s.lastId) s.lastId = round.round_id;
    }
    switch (r.game) {
      case 'crash':
        this.crash.add(r.point);
        break;
      case 'double':
        this.double.add(r.color, r.number);
        break;
      case 'slot':
        this.slot.add(r.multiplier);
        break;
      case 'wall-street':
        this.wallStreet.add(r.trending, round.round_id);
        break;
    }
  }

  /** Summaries of the selected games (a selected game with no round gets zero counts). */
  summaries(): GameSummaries {
    const out: GameSummaries = {};
    for (const g of this.games) {
      if (g === 'crash') out.crash = this.crash.summary();
      else if (g === 'double') out.double = this.double.summary();
      else if (g === 'slot') out.slot = this.slot.summary();
      else out['wall-street'] = this.wallStreet.summary();
    }
    return out;
  }

  /** Span of each game that had rounds. */
  spansOf(): Partial<Record<GameSlug, Span>> {
    const out: Partial<Record<GameSlug, Span>> = {};
    for (const [g, s] of this.spans)
      out[g] = {
        first_finished_at: s.first,
        last_finished_at: s.last,
        first_round_id: s.firstId,
        last_round_id: s.lastId,
      };
    return out;
  }
}
