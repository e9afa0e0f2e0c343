import { describe, expect, it } from 'vitest';
import { parseGameSelection, parseStreamPath, parseTypeSelection, selectionLabel } from './selection.ts';

describe('stream path selection', () => {
  it('accepts known games and types', () => {
    expect(parseGameSelection('wall-street')).toEqual({
      ok: true,
      selection: { kind: 'game', slug: 'wall-street' },
    });
    expect(parseTypeSelection('color')).toEqual({ ok: true, selection: { kind: 'type', type: 'color' } });
    expect(parseStreamPath('crash')).toEqual({ ok: true, selection: { kind: 'game', slug: 'crash' } });
    expect(parseStreamPath('type/multiplier')).toEqual({
      ok: true,
      selection: { kind: 'type', type: 'multiplier' },
    });
  });

  it.each([
    ['', 400, 'Invalid game slug'],
    ['Crash', 400, 'Invalid game slug'],
    ['cr%61sh', 400, 'Invalid game slug'],
    ['x'.repeat(65), 400, 'Invalid game slug'],
    ['roulette', 404, 'Game not found'],
  ])('game %j → %i %s', (raw, status, error) => {
    expect(parseGameSelection(raw)).toEqual({ ok: false, status, error });
  });

  it.each([
    ['MULTIPLIER', 400, 'Invalid game type'],
    ['a b', 400, 'Invalid game type'],
    ['wheel', 404, 'Game type not found'],
    ['crash', 404, 'Game type not found'],
  ])('type %j → %i %s', (raw, status, error) => {
    expect(parseTypeSelection(raw)).toEqual({ ok: false, status, error });
  });

  it.each(['crash/extra', 'type/', 'type/color/x', ''])('path %j is refused', (raw) => {
    const r = parseStreamPath(raw);
    expect(r.ok).toBe(false);
  });

  it('labels selections for logs', () => {
    expect(selectionLabel({ kind: 'game', slug: 'slot' })).toBe('game:slot');
    expect(selectionLabel({ kind: 'type', type: 'slots' })).toBe('type:slots');
    expect(selectionLabel({ kind: 'all' })).toBe('all');
  });
});
