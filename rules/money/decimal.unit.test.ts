import { describe, expect, it } from 'vitest';
import { formatScaled, MAX_MINOR, numberOfScaled, parseScaled } from './decimal.ts';

const MAX = 2 ** 53 - 1;

describe('minor units ⇄ decimal text (rules/money/decimal.ts)', () => {
  it('MAX_MINOR is 2^53 − 1', () => expect(MAX_MINOR).toBe(MAX));

  // exponent, 0, one minor unit, 2^53 − 1 minor units
  it.each([
    [0, '0', '1', '9007199254740991'],
    [2, '0.00', '0.01', '90071992547409.91'],
    [3, '0.000', '0.001', '9007199254740.991'],
    [8, '0.00000000', '0.00000001', '90071992.54740991'],
  ])('exponent %i: 0, one minor unit and 2^53 − 1 round-trip exactly', (e, zero, one, max) => {
    expect(formatScaled(0, e)).toBe(zero);
    expect(formatScaled(1, e)).toBe(one);
    expect(formatScaled(MAX, e)).toBe(max);
    expect(parseScaled(zero, e)).toBe(0);
    expect(parseScaled(one, e)).toBe(1);
    expect(parseScaled(max, e)).toBe(MAX);
    // JSON numbers: 0 and one minor unit always; 2^53 − 1 only where a double carries it.
    expect(parseScaled(0, e)).toBe(0);
    expect(parseScaled(Number(one), e)).toBe(1);
    expect(numberOfScaled(0, e)).toBe(0);
    expect(numberOfScaled(1, e)).toBe(Number(one));
  });

  it('JSON numbers: 2^53 − 1 at exponent 0 is exact, at 2, 3 and 8 no double denotes it', () => {
    expect(numberOfScaled(MAX, 0)).toBe(MAX);
    expect(parseScaled(MAX, 0)).toBe(MAX);
    for (const e of [2, 3, 8]) expect(() => numberOfScaled(MAX, e)).toThrow(/no exact JSON number/);
    // Every amount below 10^15 minor units is exact (15 significant digits).
    for (const e of [2, 3, 8])
      expect(parseScaled(numberOfScaled(999_999_999_999_999, e), e)).toBe(999_999_999_999_999);
  });

  it('reads the exponent form String() writes for small and large doubles', () => {
    expect(String(1e-8)).toBe('1e-8');
    expect(parseScaled(1e-8, 8)).toBe(1);
    expect(parseScaled(1.5e-7, 8)).toBe(15);
    expect(parseScaled(1e-8, 7)).toBeUndefined();
    expect(parseScaled(1e21, 0)).toBeUndefined();
  });

  it('formats negatives and keeps every digit', () => {
    expect(formatScaled(-5, 2)).toBe('-0.05');
    expect(formatScaled(-1250, 0)).toBe('-1250');
    expect(formatScaled(-0, 2)).toBe('0.00');
    expect(formatScaled(1250, 2)).toBe('12.50');
    expect(formatScaled(1250, 3)).toBe('1.250');
  });

  it.each([
    ['more digits than the exponent', '12.345', 2],
    ['trailing zeros past the exponent', '12.0', 0],
    ['a point without digits', '12.', 2],
    ['no leading digit', '.5', 2],
    ['a sign', '-1', 2],
    ['a plus sign', '+1', 2],
    ['blanks', ' 1', 2],
    ['an exponent in a string', '1e2', 2],
    ['a comma', '1,5', 2],
    ['empty', '', 2],
    ['beyond 2^53 − 1 minor units', '90071992547409.92', 2],
    ['beyond 2^53 − 1 at exponent 0', '9007199254740992', 0],
    ['an absurdly long string', '1'.repeat(41), 0],
  ])('refuses %s (%j at exponent %i)', (_what, s, e) => expect(parseScaled(s, e)).toBeUndefined());

  it.each([
    ['negative', -0.01],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a float sum with 17 decimals', 0.1 + 0.2],
    ['three decimals at exponent 2', 1.005],
  ])('refuses a JSON number that is %s', (_what, n) => expect(parseScaled(n, 2)).toBeUndefined());

  it('refuses to format what is not a safe integer of minor units', () => {
    expect(() => formatScaled(1.5, 2)).toThrow(/whole number/);
    expect(() => formatScaled(MAX + 1, 2)).toThrow(/whole number/);
    expect(() => numberOfScaled(-1, 2)).toThrow(/non-negative/);
  });
});
