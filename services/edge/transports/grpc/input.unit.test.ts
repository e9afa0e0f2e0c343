import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RpcError, toStatus } from './errors.ts';
import { gameSelection, historyTarget, LIMIT_RULE, parseLimit, typeSelection } from './input.ts';

function statusOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    return toStatus(err);
  }
  return undefined;
}

describe('gRPC request parsing', () => {
  it('reads a game slug and a game type', () => {
    expect(gameSelection('wall-street')).toEqual({ kind: 'game', slug: 'wall-street' });
    expect(typeSelection('multiplier')).toEqual({ kind: 'type', type: 'multiplier' });
  });

  it.each([
    [() => gameSelection('Crash!'), status.INVALID_ARGUMENT, 'Invalid game slug'],
    [() => gameSelection(undefined), status.INVALID_ARGUMENT, 'Invalid game slug'],
    [() => gameSelection('poker'), status.NOT_FOUND, 'Game not found'],
    [() => typeSelection('x y'), status.INVALID_ARGUMENT, 'Invalid game type'],
    [() => typeSelection('dice'), status.NOT_FOUND, 'Game type not found'],
  ])('refuses bad names (%#)', (fn, code, details) => {
    expect(statusOf(fn)).toEqual({ code, details });
  });

  it('defaults limit to 500 and accepts 1..1000', () => {
    expect(parseLimit(undefined)).toBe(500);
    expect(parseLimit(1)).toBe(1);
    expect(parseLimit(1000)).toBe(1000);
  });

  it.each([0, -5, 1001, 2.5, Number.NaN])('refuses limit %s with INVALID_ARGUMENT naming the rule', (n) => {
    expect(statusOf(() => parseLimit(n))).toEqual({ code: status.INVALID_ARGUMENT, details: LIMIT_RULE });
  });

  it('needs game_slug or game_type for history; a type target lists its games', () => {
    expect(statusOf(() => historyTarget({}))?.code).toBe(status.INVALID_ARGUMENT);
    const t = historyTarget({ game_type: 'multiplier' });
    expect(t.kind === 'type' && t.games.map((g) => g.slug)).toEqual(['crash', 'slot']);
    const g = historyTarget({ game_slug: 'double' });
    expect(g.kind === 'game' && g.game.id).toBe(2);
  });

  it('maps unexpected errors to INTERNAL without detail and connection errors to UNAVAILABLE', () => {
    expect(toStatus(new Error('secret stack'))).toEqual({
      code: status.INTERNAL,
      details: 'Internal Server Error',
    });
    expect(toStatus(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).code).toBe(status.UNAVAILABLE);
    expect(toStatus(new RpcError(status.NOT_FOUND, 'No rounds yet'))).toEqual({
      code: status.NOT_FOUND,
      details: 'No rounds yet',
    });
  });
});
