/**
 * Game payouts (docs/decisions/money/ and docs/architecture.md "Money rules"): pure integer arithmetic, no I/O, no clock.
 * Multipliers arrive as decimal strings (crash point, auto cash-out, slot multiplier) and are
 * compared and applied in exact hundredths (BigInt), never as floats, so "2.00" >= "2" holds and a
 * payout is floor(amount × multiplier) to the cent.
 *
 * - crash: cashed out at the lowest multiplier the flight reached of the player's triggers: the
 *   auto_cashout when crash point >= auto_cashout, a manual cash-out (decided by the
 *   round engine below the point) when there is one; lost when none; payout = floor(amount × it).
 * - double: the colour that came out wins; red and black pay 2x, white 14x.
 * - slot: payout = floor(amount × result multiplier); lost when the multiplier is 0.
 * - wall-street: the right trend pays 1.96x.
 */
import { RulesError } from '../errors.ts';
import type { RoundResult } from '../rounds/round.ts';
import type { BetPlaced } from '../wallet/events.ts';

/** A bet's selection or a round value that cannot be settled (wrong game, malformed multiplier). */
export class InvalidBetError extends RulesError {
  declare readonly code: 'INVALID_BET';

  constructor(message: string) {
    super('INVALID_BET', message);
  }
}

/** What the player chose, without the Avro union wrapper. */
export type Selection =
  | { readonly game: 'crash'; readonly autoCashout: string }
  | { readonly game: 'double'; readonly color: 'white' | 'red' | 'black' }
  | { readonly game: 'slot' }
  | { readonly game: 'wall-street'; readonly trend: 'up' | 'down' };

/** Settlement of one bet: `payoutMinor` is 0 when lost. */
export interface Payout {
  readonly outcome: 'won' | 'lost';
  readonly payoutMinor: number;
}

/** Hundredths of the double colours and of wall-street's right trend. */
export const DOUBLE_RED_BLACK = 200n;
export const DOUBLE_WHITE = 1400n;
export const WALL_STREET = 196n;

/**
 * A non-negative decimal string with at most two decimals → hundredths ("2.5" → 250n).
 * @throws InvalidBetError for anything else (sign, exponent, three decimals, empty).
 */
export function hundredths(s: string): bigint {
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) throw new InvalidBetError(`not a decimal with at most two decimals: ${JSON.stringify(s)}`);
  return BigInt(m[1] as string) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

/** The Avro selection union of a BetPlaced as a plain discriminated value. */
export function selectionOf(selection: BetPlaced['selection']): Selection {
  if ('casino.wallet.CrashBet' in selection)
    return { game: 'crash', autoCashout: selection['casino.wallet.CrashBet'].auto_cashout };
  if ('casino.wallet.DoubleBet' in selection)
    return { game: 'double', color: selection['casino.wallet.DoubleBet'].color };
  if ('casino.wallet.SlotBet' in selection) return { game: 'slot' };
  return { game: 'wall-street', trend: selection['casino.wallet.WallStreetBet'].trend };
}

/** floor(amount × h / 100) in minor units. @throws InvalidBetError when beyond 2^53. */
function times(amountMinor: number, h: bigint): number {
  const v = (BigInt(amountMinor) * h) / 100n; // BigInt division truncates = floor for non-negatives
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidBetError(`payout ${v} exceeds 2^53`);
  return Number(v);
}

const result = (h: bigint, amountMinor: number): Payout =>
  h > 0n ? { outcome: 'won', payoutMinor: times(amountMinor, h) } : { outcome: 'lost', payoutMinor: 0 };

/**
 * Settles `amountMinor` (a positive integer, minor units) staked on `selection` against a round's
 * `round` result.
 * @throws InvalidBetError when the selection is of another game than the round, the amount is not a
 *   positive safe integer, or a multiplier is malformed.
 */
export function payout(
  selection: Selection,
  round: RoundResult,
  amountMinor: number,
  /** A manual cash-out's multiplier (crash only; decimal string below the point). */
  manualCashOut?: string,
): Payout {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw new InvalidBetError(`amount must be a positive integer of minor units, got ${amountMinor}`);
  if (selection.game !== round.game)
    throw new InvalidBetError(`a ${selection.game} bet cannot be settled on a ${round.game} round`);
  switch (round.game) {
    case 'crash': {
      const cashout = hundredths((selection as Extract<Selection, { game: 'crash' }>).autoCashout);
      if (cashout < 101n) throw new InvalidBetError(`auto_cashout below 1.01: ${cashout}`);
      const point = hundredths(round.point);
      const triggers = [point >= cashout ? cashout : 0n];
      if (manualCashOut !== undefined) {
        const manual = hundredths(manualCashOut);
        if (manual < 100n || manual >= point)
          throw new InvalidBetError(`manual cash-out ${manualCashOut} is not below the point ${round.point}`);
        triggers.push(manual);
      }
      const reached = triggers.filter((h) => h > 0n);
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers only)
      const lowest = reached.reduce((a, b) => (a < b ? a : b), reached[0] ?? 0n);
      return result(reached.length === 0 ? 0n : lowest, amountMinor);
    }
    case 'double': {
      const { color } = selection as Extract<Selection, { game: 'double' }>;
      if (color !== round.color) return result(0n, amountMinor);
      return result(color === 'white' ? DOUBLE_WHITE : DOUBLE_RED_BLACK, amountMinor);
    }
    case 'slot':
      return result(hundredths(round.multiplier), amountMinor);
    case 'wall-street': {
      const { trend } = selection as Extract<Selection, { game: 'wall-street' }>;
      return result(trend === round.trending ? WALL_STREET : 0n, amountMinor);
    }
  }
}
