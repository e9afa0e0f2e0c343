import { describe, expect, it } from 'vitest';
import type { Selection } from '../../../../lib/stream/hub.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import { formatEventId, MAX_EVENT_ID_LENGTH, parseEventId } from './event-id.ts';

const mult: Selection = { kind: 'type', type: 'multiplier' };
const crash: Selection = { kind: 'game', slug: 'crash' };

describe('SSE event ids', () => {
  it('formats games in catalogue order and parses back', () => {
    const last = new Map<GameSlug, number>([
      ['slot', 3_000_000_000_017],
      ['crash', 1_000_000_000_042],
    ]);
    const id = formatEventId(mult, { t: 1_732_233_456_789.7, last });
    expect(id).toBe('t=1732233456789;crash=1000000000042;slot=3000000000017');
    expect(parseEventId(mult, id)).toEqual({ ok: true, position: { t: 1_732_233_456_789, last } });
  });

  it('leaves out games with no round yet', () => {
    const id = formatEventId(mult, { t: 5, last: new Map([['slot', 3_000_000_000_001]]) });
    expect(id).toBe('t=5;slot=3000000000001');
    expect(parseEventId(mult, 't=5')).toEqual({ ok: true, position: { t: 5, last: new Map() } });
  });

  it.each([
    ['empty', ''],
    ['no t', 'crash=1'],
    ['t not a number', 't=abc;crash=1'],
    ['negative t', 't=-5'],
    ['game outside the selection', 't=1;double=2000000000001'],
    ['unknown game', 't=1;roulette=1'],
    ['repeated game', 't=1;crash=1;crash=2'],
    ['pair without value', 't=1;crash='],
    ['pair without name', 't=1;=5'],
    ['value too large to be exact', 't=1;crash=1234567890123456'],
    ['too long', `t=1${';crash=1'.repeat(MAX_EVENT_ID_LENGTH)}`],
    ['fractional', 't=1.5'],
  ])('rejects %s', (_case, raw) => {
    expect(parseEventId(crash, raw).ok).toBe(false);
  });
});
