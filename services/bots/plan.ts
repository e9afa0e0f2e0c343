/**
 * What a simulated player does next (pure: randomness comes in as a function returning [0, 1)).
 * Stakes are whole cents from 0.10 to 5.00; selections are spread over every choice of the game.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';

/** A bet as POST /play/bets takes it: `amount` in major units, the per-game selection. */
export interface PlannedBet {
  readonly amount: number;
  readonly selection: Readonly<Record<string, string>>;
}

const CASHOUTS = ['1.20', '1.50', '2.00', '3.00', '5.00', '10.00'] as const;
const COLORS = ['red', 'black', 'white'] as const;
const TRENDS = ['up', 'down'] as const;

const pick = <T>(xs: readonly T[], r: number): T =>
  xs[Math.min(xs.length - 1, Math.floor(r * xs.length))] as T;

/** The next bet of a bot on `game`; `random()` must return numbers in [0, 1). */
export function planBet(game: GameSlug, random: () => number): PlannedBet {
  const amount = (10 + Math.floor(random() * 491)) / 100; // 0.10 .. 5.00
  switch (game) {
    case 'crash':
      return { amount, selection: { auto_cashout: pick(CASHOUTS, random()) } };
    case 'double':
      // White is one slot in fifteen: bet on it about as often.
      return {
        amount,
        selection: { color: random() < 1 / 15 ? 'white' : pick(COLORS.slice(0, 2), random()) },
      };
    case 'wall-street':
      return { amount, selection: { trend: pick(TRENDS, random()) } };
    case 'slot':
      return { amount, selection: {} };
  }
}

/** Pause before a bot's next bet, ms: uniformly 0.5x to 1.5x of `meanMs`. */
export function pauseMs(meanMs: number, random: () => number): number {
  return Math.round(meanMs * (0.5 + random()));
}
