import { describe, expect, it } from 'vitest';
import {
  formatPosition,
  MAX_POSITION_LENGTH,
  type Position,
  PositionTracker,
  parsePosition,
} from './position.ts';
import type { Selection } from './selection.ts';

const mult: Selection = { kind: 'type', type: 'multiplier' };
const crash: Selection = { kind: 'game', slug: 'crash' };

describe('stream positions', () => {
  it('names each game of the subscription in catalogue order, and reads back', () => {
    const p = {
      t: 1_700_000_000_123.9,
      last: new Map([['slot', 3_000_000_000_007] as const, ['crash', 1_000_000_000_009] as const]),
    };
    const text = formatPosition(mult, p);
    expect(text).toBe('t=1700000000123;crash=1000000000009;slot=3000000000007');
    expect(parsePosition(mult, text)).toEqual({ ok: true, position: { t: 1_700_000_000_123, last: p.last } });
    expect(parsePosition({ kind: 'all' }, text).ok).toBe(true);
  });

  it.each([
    ['oversized', `t=1${';crash=1'.repeat(40)}`, 'oversized'],
    ['empty', '', 'malformed'],
    ['no time', 'crash=1', 'malformed'],
    ['a game repeated', 't=1;crash=1;crash=2', 'malformed'],
    ['an unknown game', 't=1;roulette=1', 'malformed'],
    ['a value too large to be exact', 't=1;crash=1234567890123456', 'malformed'],
    ['a game of another subscription', 't=1;double=2000000000001', 'other-games'],
  ])('refuses %s', (_case, raw, fault) => {
    expect(raw.length > MAX_POSITION_LENGTH).toBe(fault === 'oversized');
    expect(parsePosition(crash, raw)).toMatchObject({ ok: false, fault });
  });
});

describe('PositionTracker', () => {
  it('gives each round once per game and moves the position with the oldest last round', () => {
    const t = new PositionTracker(
      mult,
      { t: 100, last: new Map([['crash', 1_000_000_000_005]]) },
      new Map([['crash', 150]]),
    );
    expect(t.text()).toBe('t=100;crash=1000000000005'); // slot has none: the origin's time
    expect(t.observe('crash', 1_000_000_000_005, 160)).toBe(false); // given before
    expect(t.observe('slot', 3_000_000_000_001, 200)).toBe(true);
    expect(t.text()).toBe('t=150;crash=1000000000005;slot=3000000000001');
    expect(t.observe('crash', 1_000_000_000_006, 300)).toBe(true);
    expect(t.text()).toBe('t=200;crash=1000000000006;slot=3000000000001');
    expect(t.isNew('crash', 1_000_000_000_006)).toBe(false);
    expect(t.lastOf('slot')).toBe(3_000_000_000_001);
  });

  it('tells whether it stands at a position without building text', () => {
    const t = new PositionTracker(mult, { t: 100, last: new Map() });
    t.observe('crash', 1_000_000_000_005, 150);
    t.observe('slot', 3_000_000_000_001, 200.4);
    const same = parsePosition(mult, t.text());
    expect(same.ok && t.equals(same.position)).toBe(true);
    for (const other of ['t=150;crash=1000000000005', 't=149;crash=1000000000005;slot=3000000000001'])
      expect(t.equals((parsePosition(mult, other) as { position: Position }).position)).toBe(false);
  });
});
