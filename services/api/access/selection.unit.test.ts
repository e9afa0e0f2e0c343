import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../errors.ts';
import { cashoutOf, selectionFor } from './selection.ts';

describe('cashoutOf', () => {
  it.each([
    ['2', '2.00'],
    [2, '2.00'],
    [1.01, '1.01'],
    ['1000000', '1000000.00'],
    ['3.5', '3.50'],
  ])('%s → %s', (v, want) => expect(cashoutOf(v)).toBe(want));
  it.each([
    ['1.00'],
    [1],
    ['1000000.01'],
    ['2.001'],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    ['-2'],
    [null],
    ['2x'],
  ])('refuses %s', (v) => expect(cashoutOf(v)).toBeUndefined());
});

describe('selectionFor', () => {
  it('maps each game to its Avro branch', () => {
    expect(selectionFor('crash', { auto_cashout: '1.5' })).toEqual({
      'casino.wallet.CrashBet': { auto_cashout: '1.50' },
    });
    expect(selectionFor('double', { color: 'white' })).toEqual({
      'casino.wallet.DoubleBet': { color: 'white' },
    });
    expect(selectionFor('slot', {})).toEqual({ 'casino.wallet.SlotBet': { lines: 1 } });
    expect(selectionFor('wall-street', { trend: 'down' })).toEqual({
      'casino.wallet.WallStreetBet': { trend: 'down' },
    });
  });
  it.each([
    ['crash', {}],
    ['crash', { auto_cashout: '2', color: 'red' }],
    ['double', { color: 'green' }],
    ['double', { color: 1 }],
    ['slot', { lines: 3 }],
    ['wall-street', { trend: 'sideways' }],
    ['roulette', {}],
  ])('refuses %s %j', (game, sel) => expect(() => selectionFor(game, sel)).toThrow(InvalidInputError));
});
