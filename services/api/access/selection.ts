/**
 * A player's choice per game into the Avro union of BetPlaced.selection. Pure.
 * crash: `{auto_cashout}` 1.01..1000000, at most two decimals, JSON number or decimal string,
 * stored as a decimal string with two decimals; double: `{color: white|red|black}`;
 * slot: `{}` (one spin); wall-street: `{trend: up|down}`.
 */
import type { BetPlaced } from '../../../lib/log/wallet-events.ts';
import { centsToMultiplier } from '../../../rules/games/crash.ts';
import { InvalidInputError } from '../errors.ts';

export type Selection = BetPlaced['selection'];

const bad = (msg: string) => new InvalidInputError('INVALID_SELECTION', `selection: ${msg}`);

function onlyKeys(sel: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(sel).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw bad(`unknown field(s) ${extra.join(', ')}`);
}

/** Cash-out multiplier as "x.yy", or undefined when out of 1.01..1000000 or not two decimals. */
export function cashoutOf(v: unknown): string | undefined {
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : typeof v === 'string' ? v : '';
  const m = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return undefined;
  const hundredths = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (hundredths < 101 || hundredths > 100_000_000) return undefined;
  return centsToMultiplier(hundredths);
}

/**
 * The BetPlaced selection of `sel` for `game`.
 * @throws InvalidInputError when `sel` does not fit the game.
 */
export function selectionFor(game: string, sel: Record<string, unknown>): Selection {
  switch (game) {
    case 'crash': {
      onlyKeys(sel, ['auto_cashout']);
      const c = cashoutOf(sel.auto_cashout);
      if (c === undefined) throw bad('auto_cashout must be 1.01..1000000 with at most two decimals');
      return { 'casino.wallet.CrashBet': { auto_cashout: c } };
    }
    case 'double': {
      onlyKeys(sel, ['color']);
      const c = sel.color;
      if (c !== 'white' && c !== 'red' && c !== 'black') throw bad('color must be white, red or black');
      return { 'casino.wallet.DoubleBet': { color: c } };
    }
    case 'slot':
      onlyKeys(sel, []);
      return { 'casino.wallet.SlotBet': { lines: 1 } };
    case 'wall-street': {
      onlyKeys(sel, ['trend']);
      const t = sel.trend;
      if (t !== 'up' && t !== 'down') throw bad('trend must be up or down');
      return { 'casino.wallet.WallStreetBet': { trend: t } };
    }
    default:
      throw bad(`no bets on game ${game}`);
  }
}
