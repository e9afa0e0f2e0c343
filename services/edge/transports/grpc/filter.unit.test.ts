import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RoundFinished, RoundResult } from '../../../../rules/rounds/round.ts';
import { RpcError } from './errors.ts';
import { parseFilter, passes } from './filter.ts';

const ALL = { kind: 'all' } as const;

function round(result: RoundResult): RoundFinished {
  const ids = { crash: 1, double: 2, slot: 3, 'wall-street': 4 } as const;
  const types = { crash: 'multiplier', double: 'color', slot: 'slots', 'wall-street': 'trending' } as const;
  return {
    type: 'RoundFinished',
    round_id: ids[result.game] * 1e12 + 1,
    game_id: ids[result.game],
    game_slug: result.game,
    game_type: types[result.game],
    finished_at: 0,
    result,
    proof: null,
  };
}

const crash = (point: string) => round({ game: 'crash', point });
const slot = (multiplier: string) => round({ game: 'slot', reels: ['a', 'b', 'c'], multiplier });
const double = (color: 'white' | 'red' | 'black') => round({ game: 'double', color, number: 1 });
const ws = (trending: 'up' | 'down') => round({ game: 'wall-street', trending });

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof RpcError ? err.grpcCode : -1;
  }
  return undefined;
}

describe('parseFilter', () => {
  it('returns null (pass everything) for an absent or empty filter', () => {
    expect(parseFilter(undefined, ALL)).toBeNull();
    expect(parseFilter(null, ALL)).toBeNull();
    expect(parseFilter({ colors: [], trends: [] }, ALL)).toBeNull();
  });

  it.each([
    [{ min_point: -1 }, 'min_point'],
    [{ max_point: Number.NaN }, 'max_point'],
    [{ min_point: Number.POSITIVE_INFINITY }, 'min_point'],
    [{ min_point: 3, max_point: 2 }, 'exceeds'],
    [{ colors: ['green'] }, 'green'],
    [{ trends: ['sideways'] }, 'sideways'],
  ])('refuses %j with INVALID_ARGUMENT naming the problem', (f, text) => {
    expect(codeOf(() => parseFilter(f, ALL))).toBe(status.INVALID_ARGUMENT);
    expect(() => parseFilter(f, ALL)).toThrow(text);
  });

  it('refuses a filter that concerns none of the games of the stream', () => {
    expect(codeOf(() => parseFilter({ colors: ['red'] }, { kind: 'game', slug: 'crash' }))).toBe(
      status.INVALID_ARGUMENT,
    );
    expect(codeOf(() => parseFilter({ min_point: 2 }, { kind: 'type', type: 'color' }))).toBe(
      status.INVALID_ARGUMENT,
    );
    // colors is irrelevant to crash, but min_point concerns it: accepted.
    expect(parseFilter({ min_point: 2, colors: ['red'] }, { kind: 'game', slug: 'crash' })).not.toBeNull();
    expect(parseFilter({ max_point: 2 }, { kind: 'type', type: 'slots' })).not.toBeNull();
  });
});

describe('passes', () => {
  it('passes every round with no filter', () => {
    for (const r of [crash('1.00'), slot('0.00'), double('red'), ws('up')])
      expect(passes(null, r)).toBe(true);
  });

  it('bounds crash points and slot multipliers inclusively, and admits only those games', () => {
    const f = parseFilter({ min_point: 2, max_point: 10 }, ALL);
    expect(passes(f, crash('2.00'))).toBe(true);
    expect(passes(f, crash('10.00'))).toBe(true);
    expect(passes(f, crash('1.99'))).toBe(false);
    expect(passes(f, crash('10.01'))).toBe(false);
    expect(passes(f, slot('5.00'))).toBe(true);
    expect(passes(f, slot('0.00'))).toBe(false);
    expect(passes(f, double('red'))).toBe(false);
    expect(passes(f, ws('up'))).toBe(false);
  });

  it('treats an absent bound as open', () => {
    const min = parseFilter({ min_point: 3 }, ALL);
    expect(passes(min, crash('1000.00'))).toBe(true);
    const max = parseFilter({ max_point: 0 }, ALL);
    expect(passes(max, slot('0.00'))).toBe(true);
    expect(passes(max, crash('1.00'))).toBe(false);
  });

  it('selects colours of double and trends of wall-street', () => {
    const f = parseFilter({ colors: ['red', 'white'], trends: ['down'] }, ALL);
    expect(passes(f, double('red'))).toBe(true);
    expect(passes(f, double('white'))).toBe(true);
    expect(passes(f, double('black'))).toBe(false);
    expect(passes(f, ws('down'))).toBe(true);
    expect(passes(f, ws('up'))).toBe(false);
    expect(passes(f, crash('5.00'))).toBe(false);
  });

  it('combines criteria of different games as a union', () => {
    const f = parseFilter({ colors: ['black'], min_point: 2 }, ALL);
    expect(passes(f, double('black'))).toBe(true);
    expect(passes(f, crash('2.50'))).toBe(true);
    expect(passes(f, crash('1.50'))).toBe(false);
    expect(passes(f, ws('up'))).toBe(false);
  });
});
