import { describe, expect, it } from 'vitest';
import { AnalyticsInputError } from './errors.ts';
import { checkOrder, parseBound } from './range.ts';

describe('range bounds', () => {
  it('parses keywords, offsets, partition:offset pairs, zoned times and dates', () => {
    expect(parseBound('earliest', '--from')).toEqual({ kind: 'earliest' });
    expect(parseBound('latest', '--to')).toEqual({ kind: 'latest' });
    expect(parseBound('12000', '--from')).toEqual({ kind: 'offset', offset: 12000n });
    expect(parseBound('0:100,2:250', '--from')).toEqual({
      kind: 'partitions',
      offsets: new Map([
        [0, 100n],
        [2, 250n],
      ]),
    });
    expect(parseBound('2026-01-02T10:00:00Z', '--from')).toMatchObject({
      kind: 'time',
      ms: Date.UTC(2026, 0, 2, 10),
    });
    expect(parseBound('2026-01-02T12:00+02:00', '--from')).toMatchObject({ ms: Date.UTC(2026, 0, 2, 10) });
    expect(parseBound('2026-01-02T10:00:00.250Z', '--to')).toMatchObject({
      ms: Date.UTC(2026, 0, 2, 10, 0, 0, 250),
    });
    expect(parseBound('2026-01-02', '--to')).toMatchObject({ kind: 'time', ms: Date.UTC(2026, 0, 2) });
  });

  it.each([
    ['yesterday'],
    ['2026-01-02T10:00:00'], // no zone
    ['2026-02-30'], // no such day
    ['2026-01-02T25:00Z'],
    ['-5'],
    ['1.5'],
    ['0:10,x:5'],
    [''],
  ])('refuses %j naming the flag and the accepted forms', (text) => {
    expect(() => parseBound(text, '--from')).toThrow(AnalyticsInputError);
    expect(() => parseBound(text, '--from')).toThrow(/--from .*ISO 8601/);
  });

  it('refuses a partition given twice', () => {
    expect(() => parseBound('0:1,0:2', '--to')).toThrow(/partition 0 given twice/);
  });

  it('refuses a start after the end when both are times or both offsets', () => {
    const t1 = parseBound('2026-01-02T10:00:00Z', '--from');
    const t0 = parseBound('2026-01-01', '--to');
    expect(() => checkOrder(t1, t0)).toThrow(/--from 2026-01-02T10:00:00Z is after --to 2026-01-01/);
    expect(() => checkOrder(parseBound('50', '--from'), parseBound('10', '--to'))).toThrow(/after/);
    expect(() => checkOrder(parseBound('latest', '--from'), parseBound('earliest', '--to'))).toThrow(/after/);
    expect(() => checkOrder(t0, t1)).not.toThrow();
    expect(() => checkOrder(parseBound('10', '--from'), parseBound('10', '--to'))).not.toThrow();
  });
});
