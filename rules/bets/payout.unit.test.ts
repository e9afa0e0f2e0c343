import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crash } from '../games/crash.ts';
import { double } from '../games/double.ts';
import { exactRtp, slot } from '../games/slot.ts';
import { wallStreet } from '../games/wall-street.ts';
import type { RoundResult } from '../rounds/round.ts';
import { hundredths, InvalidBetError, payout, type Selection, selectionOf } from './payout.ts';

const crashAt = (point: string): RoundResult => ({ game: 'crash', point });
const bet = (autoCashout: string): Selection => ({ game: 'crash', autoCashout });

describe('hundredths', () => {
  it('reads up to two decimals exactly and refuses the rest', () => {
    expect(hundredths('2')).toBe(200n);
    expect(hundredths('2.5')).toBe(250n);
    expect(hundredths('1000000.00')).toBe(100000000n);
    for (const bad of ['', '-1', '1.234', '1e3', ' 1', '1.', '.5', 'NaN'])
      expect(() => hundredths(bad), bad).toThrow(InvalidBetError);
  });
});

describe('payout: crash', () => {
  it('wins exactly at the crash point and loses one hundredth above it', () => {
    expect(payout(bet('2.31'), crashAt('2.31'), 1000)).toEqual({ outcome: 'won', payoutMinor: 2310 });
    expect(payout(bet('2.32'), crashAt('2.31'), 1000)).toEqual({ outcome: 'lost', payoutMinor: 0 });
    expect(payout(bet('2'), crashAt('2.00'), 1000)).toEqual({ outcome: 'won', payoutMinor: 2000 });
  });
  it('floors the payout to the cent', () => {
    // 0.07 × 1.99 = 0.1393 → 0.13
    expect(payout(bet('1.99'), crashAt('5.00'), 7)).toEqual({ outcome: 'won', payoutMinor: 13 });
  });
  it('a 1.00 bust loses every cash-out; float-unsafe values compare exactly', () => {
    expect(payout(bet('1.01'), crashAt('1.00'), 100).outcome).toBe('lost');
    expect(payout(bet('1000000'), crashAt('1000000.00'), 1).payoutMinor).toBe(1_000_000);
  });
  it('refuses a cash-out below 1.01 or with three decimals', () => {
    expect(() => payout(bet('1.00'), crashAt('2.00'), 100)).toThrow(InvalidBetError);
    expect(() => payout(bet('1.005'), crashAt('2.00'), 100)).toThrow(InvalidBetError);
  });
  it('pays a manual cash-out, or the auto cash-out when the flight reached it first', () => {
    expect(payout(bet('10.00'), crashAt('3.00'), 1000, '1.50')).toEqual({
      outcome: 'won',
      payoutMinor: 1500,
    });
    expect(payout(bet('2.00'), crashAt('3.00'), 1000, '2.50')).toEqual({ outcome: 'won', payoutMinor: 2000 });
    expect(payout(bet('5.00'), crashAt('3.00'), 1000, '1.00')).toEqual({ outcome: 'won', payoutMinor: 1000 });
    // The auto target above the point never triggers; the manual one below it does.
    expect(payout(bet('4.00'), crashAt('3.00'), 1000, '2.99')).toEqual({ outcome: 'won', payoutMinor: 2990 });
  });
  it('refuses a manual cash-out at or above the point (the engine never decides one)', () => {
    expect(() => payout(bet('10.00'), crashAt('3.00'), 1000, '3.00')).toThrow(InvalidBetError);
    expect(() => payout(bet('10.00'), crashAt('1.00'), 1000, '1.00')).toThrow(InvalidBetError);
  });
});

describe('payout: double, slot, wall-street', () => {
  const d = (color: 'white' | 'red' | 'black', n: number): RoundResult => ({
    game: 'double',
    color,
    number: n,
  });
  it('double pays 2x on red/black and 14x on white, nothing on another colour', () => {
    expect(payout({ game: 'double', color: 'red' }, d('red', 3), 150)).toEqual({
      outcome: 'won',
      payoutMinor: 300,
    });
    expect(payout({ game: 'double', color: 'black' }, d('black', 9), 1)).toEqual({
      outcome: 'won',
      payoutMinor: 2,
    });
    expect(payout({ game: 'double', color: 'white' }, d('white', 0), 150)).toEqual({
      outcome: 'won',
      payoutMinor: 2100,
    });
    expect(payout({ game: 'double', color: 'red' }, d('white', 0), 150).outcome).toBe('lost');
    expect(payout({ game: 'double', color: 'white' }, d('black', 8), 150).outcome).toBe('lost');
  });
  it('slot pays amount × multiplier floored, lost at 0', () => {
    const s = (multiplier: string): RoundResult => ({ game: 'slot', reels: ['a', 'b', 'c'], multiplier });
    expect(payout({ game: 'slot' }, s('3.00'), 333)).toEqual({ outcome: 'won', payoutMinor: 999 });
    expect(payout({ game: 'slot' }, s('17.00'), 1)).toEqual({ outcome: 'won', payoutMinor: 17 });
    expect(payout({ game: 'slot' }, s('0.00'), 500)).toEqual({ outcome: 'lost', payoutMinor: 0 });
  });
  it('wall-street pays 1.96x on the right trend, floored', () => {
    const w = (trending: 'up' | 'down'): RoundResult => ({ game: 'wall-street', trending });
    expect(payout({ game: 'wall-street', trend: 'up' }, w('up'), 1000).payoutMinor).toBe(1960);
    expect(payout({ game: 'wall-street', trend: 'down' }, w('down'), 3)).toEqual({
      outcome: 'won',
      payoutMinor: 5,
    });
    expect(payout({ game: 'wall-street', trend: 'up' }, w('down'), 1000).outcome).toBe('lost');
  });
  it('refuses a selection of another game and a non-positive or fractional amount', () => {
    expect(() => payout({ game: 'slot' }, crashAt('2.00'), 100)).toThrow(
      /cannot be settled on a crash round/,
    );
    expect(() => payout({ game: 'slot' }, { game: 'slot', reels: [], multiplier: '1.00' }, 0)).toThrow(
      InvalidBetError,
    );
    expect(() => payout({ game: 'slot' }, { game: 'slot', reels: [], multiplier: '1.00' }, 1.5)).toThrow(
      InvalidBetError,
    );
  });
  it('unwraps the Avro selection union', () => {
    expect(selectionOf({ 'casino.wallet.CrashBet': { auto_cashout: '2.00' } })).toEqual(bet('2.00'));
    expect(selectionOf({ 'casino.wallet.SlotBet': { lines: 1 } })).toEqual({ game: 'slot' });
    expect(selectionOf({ 'casino.wallet.WallStreetBet': { trend: 'down' } })).toEqual({
      game: 'wall-street',
      trend: 'down',
    });
  });
});

/** Return to player over `n` rounds drawn by the engine's own rules from deterministic HMAC-like bytes. */
function rtp(n: number, draw: (h: Uint8Array) => RoundResult, sel: Selection): number {
  const stake = 10_000;
  let paid = 0;
  for (let i = 0; i < n; i++) {
    const h = createHash('sha256').update(`rtp-${sel.game}-${i}`).digest();
    paid += payout(sel, draw(h), stake).payoutMinor;
  }
  return paid / (n * stake);
}

describe('RTP against the round engine distributions (200 000 rounds each)', () => {
  const N = 200_000;
  it('crash at 2.00 returns about 0.99', () => {
    expect(rtp(N, crash, bet('2.00'))).toBeCloseTo(0.99, 1);
  });
  it('double returns 14/15 on every colour', () => {
    expect(rtp(N, double, { game: 'double', color: 'red' })).toBeCloseTo(14 / 15, 1);
    expect(Math.abs(rtp(N, double, { game: 'double', color: 'white' }) - 14 / 15)).toBeLessThan(0.05);
  });
  it('slot matches the exact paytable RTP', () => {
    expect(Math.abs(rtp(N, slot, { game: 'slot' }) - exactRtp())).toBeLessThan(0.03);
  });
  it('wall-street returns 0.98', () => {
    expect(rtp(N, wallStreet, { game: 'wall-street', trend: 'up' })).toBeCloseTo(0.98, 1);
  });
});
