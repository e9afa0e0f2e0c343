import { describe, expect, it } from 'vitest';
import { charsetOf, MAX_JSON_DEPTH, nestsDeeperThan, queryEncodingProblem } from './input-policy.ts';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('nestsDeeperThan (one pass over the bytes, no recursion)', () => {
  it('counts arrays and objects, not brackets inside strings or after escapes', () => {
    expect(nestsDeeperThan(bytes('{"a":[[1]]}'), 3)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[[[1]]]}'), 3)).toBe(true);
    expect(nestsDeeperThan(bytes('{"a":"[[[[[[\\"[[[["}'), 1)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a\\\\":[[]]}'), 2)).toBe(true);
    expect(nestsDeeperThan(bytes('["é[[[", {"ü":{}}]'), 3)).toBe(false);
  });

  it('measures a body nested 100,000 levels without overflowing the stack', () => {
    const deep = bytes(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(nestsDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(
      nestsDeeperThan(bytes(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`), MAX_JSON_DEPTH),
    ).toBe(false);
  });
});

describe('charsetOf', () => {
  it.each([
    ['application/json', undefined],
    ['application/json; charset=UTF-8', 'utf-8'],
    ['application/json;charset="utf-16"', 'utf-16'],
    ['application/json; foo=bar; Charset=Latin1', 'latin1'],
  ])('%s → %s', (header, want) => {
    expect(charsetOf(header)).toBe(want);
  });
});

describe('queryEncodingProblem', () => {
  it.each([
    ['/api/history/crash?limit=5', undefined],
    ['/api/games', undefined],
    ['/x?q=caf%C3%A9&b=a+b&flag', undefined],
    ['/x?limit=%FF', 'limit'],
    ['/x?a=1&id=%ED%A0%80', 'id'],
    ['/x?p=100%', 'p'],
    ['/x?%C3=1', 'querystring'],
  ])('%s → %s', (url, field) => {
    const p = queryEncodingProblem(url);
    if (field === undefined) expect(p).toBeUndefined();
    else expect(p?.startsWith(`${field}:`), p).toBe(true);
  });
});
