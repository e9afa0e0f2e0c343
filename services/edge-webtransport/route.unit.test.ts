import { describe, expect, it } from 'vitest';
import { redactToken, routeWebTransport } from './route.ts';

describe('routeWebTransport', () => {
  it('opens a game or a type subscription and passes the token on', () => {
    expect(routeWebTransport('/wt?game=crash&token=tok_ab')).toEqual({
      ok: true,
      selection: { kind: 'game', slug: 'crash' },
      token: 'tok_ab',
    });
    expect(routeWebTransport('/wt?type=multiplier')).toEqual({
      ok: true,
      selection: { kind: 'type', type: 'multiplier' },
      token: undefined,
    });
  });

  it.each([
    ['/', 404, 'Not found'],
    ['/wt/crash', 404, 'Not found'],
    ['/WT?game=crash', 404, 'Not found'],
    ['/wt', 400, 'A game or type query parameter is required'],
    ['/wt?token=x', 400, 'A game or type query parameter is required'],
    ['/wt?game=crash&type=color', 400, 'Give either game or type, not both'],
    ['/wt?game=crash&game=double', 400, 'game, type and token may each be given once'],
    ['/wt?game=', 400, 'Invalid game slug'],
    ['/wt?game=Crash', 400, 'Invalid game slug'],
    ['/wt?game=%2e%2e', 400, 'Invalid game slug'],
    ['/wt?game=poker', 404, 'Game not found'],
    ['/wt?type=multi%20plier', 400, 'Invalid game type'],
    ['/wt?type=poker', 404, 'Game type not found'],
  ])('refuses %s with %i', (path, status, error) => {
    expect(routeWebTransport(path)).toEqual({ ok: false, status, error });
  });
});

describe('redactToken', () => {
  it.each([
    ['/wt?game=crash&token=tok_abc', '/wt?game=crash&token=[redacted]'],
    ['/wt?token=sk_live_x&game=crash', '/wt?token=[redacted]&game=crash'],
    ['/wt?game=crash', '/wt?game=crash'],
    ['/wt?mytoken=x', '/wt?mytoken=x'],
  ])('%s → %s', (input, want) => {
    expect(redactToken(input)).toBe(want);
  });
});
