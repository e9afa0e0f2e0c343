import { describe, expect, it } from 'vitest';
import { bearer, requestOrigin } from './access.ts';

describe('bearer', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer tok_ab', 'tok_ab'],
    ['bearer  sk_live_x ', 'sk_live_x'],
    ['tok_ab', 'tok_ab'],
    ['Basic abc', 'Basic abc'],
  ])('%s → %s', (input, want) => {
    expect(bearer(input)).toBe(want);
  });
});

describe('requestOrigin', () => {
  it.each([
    [{ origin: 'https://a.example' }, 'https://a.example'],
    [{ origin: 'https://a.example', referer: 'https://b.example/x' }, 'https://a.example'],
    [{ referer: 'http://127.0.0.1:8080/sse.html?x=1' }, 'http://127.0.0.1:8080'],
    [{ referer: 'file:///etc/passwd' }, undefined],
    [{ referer: 'not a url' }, undefined],
    [{}, undefined],
  ])('%j → %s', (headers, want) => {
    expect(requestOrigin(headers)).toBe(want);
  });
});
