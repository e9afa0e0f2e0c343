/**
 * Double statistics: colour and wheel-slot frequencies against the wheel of
 * rules/games/double.ts (15 slots: 0 white, 1..7 red, 8..14 black, so 1/15,
 * 7/15, 7/15), with Pearson chi-square goodness-of-fit figures for both.
 */
import { colorOf, DOUBLE_SLOTS } from '../../../rules/games/double.ts';
import { type ChiSquare, chiSquare } from './fit.ts';

export const COLOURS = ['white', 'red', 'black'] as const;
export type Colour = (typeof COLOURS)[number];

/** Theoretical probability of each colour, counted from the wheel itself. */
export function colourProbabilities(): Record<Colour, number> {
  const slots: Record<Colour, number> = { white: 0, red: 0, black: 0 };
  for (let n = 0; n < DOUBLE_SLOTS; n++) slots[colorOf(n)]++;
  return {
    white: slots.white / DOUBLE_SLOTS,
    red: slots.red / DOUBLE_SLOTS,
    black: slots.black / DOUBLE_SLOTS,
  };
}

export interface DoubleSummary {
  readonly game: 'double';
  readonly rounds: number;
  /** Records whose number is not a wheel slot or whose colour is not that slot's colour. */
  readonly invalid: number;
  readonly colours: readonly { colour: Colour; count: number; share: number; theoretical: number }[];
  /** Goodness of fit of the colour counts (2 degrees of freedom); null without rounds. */
  readonly colour_fit: ChiSquare | null;
  /** Count per wheel slot 0..14. */
  readonly numbers: readonly number[];
  /** Goodness of fit of the slot counts against 1/15 each (14 degrees of freedom). */
  readonly number_fit: ChiSquare | null;
}

/** Accumulates double results; constant memory (15 counts). */
export class DoubleStats {
  private readonly byNumber = new Array<number>(DOUBLE_SLOTS).fill(0);
  private bad = 0;

  /** Counts one result; an impossible one is counted as invalid only. */
  add(color: string, number: number): void {
    if (!Number.isInteger(number) || number < 0 || number >= DOUBLE_SLOTS || colorOf(number) !== color) {
      this.bad++;
      return;
    }
    (this.byNumber[number] as number)++;
  }

  summary(): DoubleSummary {
    const n = this.byNumber.reduce((a, b) => a + b, 0);
    const theory = colourProbabilities();
    const counts: Record<Colour, number> = { white: 0, red: 0, black: 0 };
    this.byNumber.forEach((c, slot) => {
      counts[colorOf(slot)] += c;
    });
    return {
      game: 'double',
      rounds: n,
      invalid: this.bad,
      colours: COLOURS.map((colour) => ({
        colour,
        count: counts[colour],
        share: n === 0 ? 0 : counts[colour] / n,
        theoretical: theory[colour],
      })),
      colour_fit: chiSquare(
        COLOURS.map((c) => counts[c]),
        COLOURS.map((c) => theory[c]),
      ),
      numbers: [...this.byNumber],
      number_fit: chiSquare(
        this.byNumber,
        this.byNumber.map(() => 1 / DOUBLE_SLOTS),
      ),
    };
  }
}
