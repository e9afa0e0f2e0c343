/**
 * Wall Street statistics: up/down frequencies against 1/2 each
 * (rules/games/wall-street.ts) and streaks: the longest, the distribution of
 * streak lengths beside a fair coin's (a streak of exactly k has probability 2^−k), and the
 * Wald–Wolfowitz runs test. Rounds must be added in round order (one game is one partition).
 */
import { type ChiSquare, chiSquare, type RunsTest, runsTest } from './fit.ts';

export type Trend = 'up' | 'down';

interface Streak {
  readonly trending: Trend;
  readonly length: number;
  readonly from_round_id: number;
  readonly to_round_id: number;
}

export interface WallStreetSummary {
  readonly game: 'wall-street';
  readonly rounds: number;
  readonly invalid: number;
  readonly up: number;
  readonly down: number;
  /** Share of up, against 0.5. */
  readonly up_share: number;
  readonly fit: ChiSquare | null;
  /** Longest streak of either direction (the first one when tied); null without rounds. */
  readonly longest: Streak | null;
  readonly longest_up: number;
  readonly longest_down: number;
  /** Streaks per length (ascending); `expected` is streaks · 2^−length for a fair coin. */
  readonly streaks: readonly { length: number; count: number; expected: number }[];
  readonly runs_test: RunsTest | null;
}

/** A streak as it is being counted. */
interface OpenStreak {
  trending: Trend;
  length: number;
  from: number;
  to: number;
}

/**
 * Counts the ended streak `s` into `lengths` and `longestBy`.
 * @returns the longest streak of `longest` and `s` (the earlier one when tied).
 */
function endStreak(
  s: OpenStreak,
  lengths: Map<number, number>,
  longestBy: Record<Trend, number>,
  longest: Streak | null,
): Streak | null {
  lengths.set(s.length, (lengths.get(s.length) ?? 0) + 1);
  if (s.length > longestBy[s.trending]) longestBy[s.trending] = s.length;
  return !longest || s.length > longest.length
    ? { trending: s.trending, length: s.length, from_round_id: s.from, to_round_id: s.to }
    : longest;
}

/** Accumulates trends in round order; memory: one count per distinct streak length. */
export class WallStreetStats {
  private readonly lengths = new Map<number, number>();
  private up = 0;
  private down = 0;
  private bad = 0;
  private current: OpenStreak | null = null;
  private longest: Streak | null = null;
  private readonly longestBy = { up: 0, down: 0 };

  add(trending: string, roundId: number): void {
    if (trending !== 'up' && trending !== 'down') {
      this.bad++;
      return;
    }
    if (trending === 'up') this.up++;
    else this.down++;
    const cur = this.current;
    if (cur && cur.trending === trending) {
      cur.length++;
      cur.to = roundId;
    } else {
      if (cur) this.longest = endStreak(cur, this.lengths, this.longestBy, this.longest);
      this.current = { trending, length: 1, from: roundId, to: roundId };
    }
  }

  /** The figures so far; the open streak counts as ended here (the state is not changed). */
  summary(): WallStreetSummary {
    const lengths = new Map(this.lengths);
    const longestBy = { ...this.longestBy };
    const longest = this.current ? endStreak(this.current, lengths, longestBy, this.longest) : this.longest;
    const runs = [...lengths.values()].reduce((a, b) => a + b, 0);
    const n = this.up + this.down;
    const maxLength = Math.max(0, ...lengths.keys());
    const streaks = Array.from({ length: maxLength }, (_, i) => ({
      length: i + 1,
      count: lengths.get(i + 1) ?? 0,
      expected: runs * 2 ** -(i + 1),
    }));
    return {
      game: 'wall-street',
      rounds: n,
      invalid: this.bad,
      up: this.up,
      down: this.down,
      up_share: n === 0 ? 0 : this.up / n,
      fit: chiSquare([this.up, this.down], [0.5, 0.5]),
      longest,
      longest_up: longestBy.up,
      longest_down: longestBy.down,
      streaks,
      runs_test: runsTest(this.up, this.down, runs),
    };
  }
}
