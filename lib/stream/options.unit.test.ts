import { describe, expect, it } from 'vitest';
import { parseCommand, parseSubscriptionName } from './commands.ts';
import { parseStreamOptions, queryOf } from './options.ts';

describe('stream options', () => {
  it('reads since and the flags; absent flags are off', () => {
    expect(parseStreamOptions(queryOf('/ws/crash?since=t%3D1%3Bcrash%3D5&envelope=1&latest=true'))).toEqual({
      ok: true,
      options: { since: 't=1;crash=5', envelope: true, latest: true, lifecycle: false },
    });
    expect(parseStreamOptions(queryOf('/ws/crash'))).toMatchObject({
      ok: true,
      options: { since: undefined },
    });
  });

  it.each([
    ['/ws/crash?envelope=yes', 'envelope must be 1 or 0'],
    ['/ws/crash?since=t%3D1&since=t%3D2', 'since may be given once'],
    ['/ws/crash?latest=1&latest=0', 'latest may be given once'],
  ])('refuses %s', (path, error) => {
    expect(parseStreamOptions(queryOf(path))).toEqual({ ok: false, status: 400, error });
  });
});

describe('envelope commands', () => {
  it('reads subscribe and unsubscribe', () => {
    expect(parseCommand('{"op":"subscribe","sub":"type:multiplier","since":"t=1","latest":true}')).toEqual({
      ok: true,
      command: {
        op: 'subscribe',
        selection: { kind: 'type', type: 'multiplier' },
        sub: 'type:multiplier',
        since: 't=1',
        latest: true,
        lifecycle: false,
      },
    });
    expect(parseCommand('{"op":"unsubscribe","sub":"all"}')).toEqual({
      ok: true,
      command: { op: 'unsubscribe', selection: { kind: 'all' }, sub: 'all' },
    });
  });

  it.each([
    ['not json', 400, 'A command is one JSON object'],
    ['[1]', 400, 'A command is one JSON object'],
    ['{"op":"publish","sub":"all"}', 400, 'op must be subscribe or unsubscribe'],
    ['{"op":"subscribe"}', 400, 'sub is required'],
    ['{"op":"subscribe","sub":"game:roulette"}', 404, 'Game not found'],
    ['{"op":"subscribe","sub":"type:wheel"}', 404, 'Game type not found'],
    ['{"op":"subscribe","sub":"game:CRASH"}', 400, 'Invalid game slug'],
    ['{"op":"subscribe","sub":"crash"}', 400, 'sub must be game:<slug>, type:<type> or all'],
    ['{"op":"subscribe","sub":"all","latest":"yes"}', 400, 'latest must be true or false'],
    ['{"op":"subscribe","sub":"all","since":5}', 400, 'since must be a position text'],
  ])('answers %s with %i', (text, status, error) => {
    expect(parseCommand(text)).toMatchObject({ ok: false, status, error });
  });

  it('names selections as the envelopes do', () => {
    expect(parseSubscriptionName('game:wall-street')).toEqual({
      ok: true,
      selection: { kind: 'game', slug: 'wall-street' },
    });
  });
});
