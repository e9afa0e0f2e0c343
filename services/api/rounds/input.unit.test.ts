import { describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { LIMIT_DEFAULT, LIMIT_RULE, parseGameParam, parseLimit, parseTypeParam } from './input.ts';

describe('parseGameParam', () => {
  it.each([
    ['crash', 1],
    ['double', 2],
    ['slot', 3],
    ['wall-street', 4],
  ])('returns game %s (id %i)', (slug, id) => {
    expect(parseGameParam(slug)).toMatchObject({ slug, id });
  });

  it.each([
    ['upper case', 'Crash'],
    ['underscore', 'wall_street'],
    ['space', 'cr ash'],
    ['dot', 'crash.json'],
    ['empty', ''],
    ['65 characters', 'a'.repeat(65)],
    ['not a string', ['crash']],
  ])('rejects a malformed slug (%s) with 400 "Invalid game slug"', (_case, raw) => {
    expect(() => parseGameParam(raw)).toThrow(InvalidInputError);
    expect(() => parseGameParam(raw)).toThrow('Invalid game slug');
  });

  it.each(['poker', 'a'.repeat(64), 'type'])(
    'rejects well-formed unknown %s with "Game not found"',
    (raw) => {
      expect(() => parseGameParam(raw)).toThrow(NotFoundError);
      expect(() => parseGameParam(raw)).toThrow('Game not found');
    },
  );
});

describe('parseTypeParam', () => {
  it.each(['multiplier', 'color', 'slots', 'trending'])('accepts %s', (t) => {
    expect(parseTypeParam(t)).toBe(t);
  });

  it.each(['Multiplier', 'multi plier', '', 'x'.repeat(65)])(
    'rejects malformed %j as "Invalid game type"',
    (t) => {
      expect(() => parseTypeParam(t)).toThrow(InvalidInputError);
      expect(() => parseTypeParam(t)).toThrow('Invalid game type');
    },
  );

  it.each(['roulette', 'crash'])('rejects unknown %s as "Game type not found"', (t) => {
    expect(() => parseTypeParam(t)).toThrow(NotFoundError);
    expect(() => parseTypeParam(t)).toThrow('Game type not found');
  });
});

describe('parseLimit', () => {
  it('defaults to 500 when absent', () => {
    expect(parseLimit(undefined)).toBe(LIMIT_DEFAULT);
    expect(LIMIT_DEFAULT).toBe(500);
  });

  it.each([
    ['1', 1],
    ['20', 20],
    ['1000', 1000],
    ['0007', 7],
  ])('accepts %j as %i', (raw, n) => {
    expect(parseLimit(raw)).toBe(n);
  });

  it.each([
    ['zero', '0'],
    ['above the maximum', '1001'],
    ['far above', '99999'],
    ['letters', 'abc'],
    ['a fraction', '1.5'],
    ['negative', '-1'],
    ['empty', ''],
    ['plus sign', '+5'],
    ['exponent', '1e2'],
    ['hex', '0x10'],
    ['padded', ' 5'],
    ['a number, not text', 5],
  ])('rejects %s (%j) naming the rule', (_case, raw) => {
    expect(() => parseLimit(raw)).toThrow(InvalidInputError);
    expect(() => parseLimit(raw)).toThrow(LIMIT_RULE);
  });

  it('rejects a repeated parameter even when each value is valid', () => {
    expect(() => parseLimit(['5', '5'])).toThrow(`${LIMIT_RULE}, given once`);
  });

  it('states the rule with its bounds', () => {
    expect(LIMIT_RULE).toBe('limit must be an integer from 1 to 1000');
  });
});
