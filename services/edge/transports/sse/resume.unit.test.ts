import { describe, expect, it } from 'vitest';
import { Delivery, FanOutHub } from '../../../../lib/stream/hub.ts';
import { round } from '../../../../tests/support/edge.ts';
import { RECENT_PER_GAME, RecentRounds } from './resume.ts';
import { awaitNamedRounds, resumePosition } from './sse.ts';

const d = (slug: 'crash' | 'slot' | 'double', seq: number, at: number) =>
  new Delivery(round(slug, seq), at, 0, BigInt(seq));

describe('RecentRounds', () => {
  it('answers the rounds after each position, merged by append time', () => {
    const r = new RecentRounds();
    for (const x of [
      d('crash', 1, 10),
      d('slot', 1, 11),
      d('crash', 2, 20),
      d('slot', 2, 15),
      d('double', 1, 12),
    ])
      r.deliver(x);
    const got = r.since(
      { kind: 'type', type: 'multiplier' },
      {
        t: 10,
        last: new Map([
          ['crash', round('crash', 1).round_id],
          ['slot', round('slot', 1).round_id],
        ]),
      },
    );
    expect(got?.map((x) => x.round.round_id)).toEqual([
      round('slot', 2).round_id,
      round('crash', 2).round_id,
    ]);
  });

  it('declines when memory does not reach back to a position, or a game has none', () => {
    const r = new RecentRounds();
    r.deliver(d('crash', 5, 10));
    const sel = { kind: 'game', slug: 'crash' } as const;
    expect(r.since(sel, { t: 0, last: new Map([['crash', round('crash', 3).round_id]]) })).toBeUndefined();
    expect(r.since(sel, { t: 0, last: new Map() })).toBeUndefined();
    expect(r.since(sel, { t: 0, last: new Map([['crash', round('crash', 5).round_id]]) })).toEqual([]);
  });

  it('keeps a bounded number of rounds per game', () => {
    const r = new RecentRounds();
    for (let i = 1; i <= RECENT_PER_GAME * 3; i++) r.deliver(d('crash', i, i));
    const sel = { kind: 'game', slug: 'crash' } as const;
    expect(r.since(sel, { t: 0, last: new Map([['crash', round('crash', 1).round_id]]) })).toBeUndefined();
    const recent = r.since(sel, {
      t: 0,
      last: new Map([['crash', round('crash', RECENT_PER_GAME * 2 + 100).round_id]]),
    });
    expect(recent?.length).toBe(RECENT_PER_GAME - 100);
  });
});

describe('resumePosition', () => {
  const hub = new FanOutHub();
  hub.publish(d('crash', 7, 1000));
  const sel = { kind: 'game', slug: 'crash' } as const;
  const now = 2_000_000;

  it('accepts an id within the window naming rounds the edge has seen', () => {
    const r = resumePosition(hub, sel, `t=${now - 1000};crash=${round('crash', 6).round_id}`, now);
    expect(r.position?.last.get('crash')).toBe(round('crash', 6).round_id);
  });

  // replaces the one-hour window: a position from any point of the log resumes.
  it('accepts an id from long ago, down to the start of the log', () => {
    expect(resumePosition(hub, sel, 't=1', now).position?.t).toBe(1);
    expect(resumePosition(hub, sel, 't=0', now).position).toEqual({ t: 0, last: new Map() });
  });

  it.each([
    ['malformed', 'nonsense'],
    ['future time', `t=${now + 3_600_000}`],
    ['unseen round', `t=${now};crash=${round('crash', 8).round_id}`],
  ])('ignores a %s id', (_case, raw) => {
    const r = resumePosition(hub, sel, raw, now);
    expect(r.position).toBeUndefined();
    expect(r.ignored).toBeTruthy();
  });

  it('treats no id as a fresh start', () => {
    expect(resumePosition(hub, sel, undefined, now)).toEqual({});
    expect(resumePosition(hub, sel, '', now)).toEqual({});
  });
});

describe('awaitNamedRounds', () => {
  const sel = { kind: 'game', slug: 'crash' } as const;

  it('waits for a round another edge delivered first, then the id resumes', async () => {
    const hub = new FanOutHub();
    hub.publish(d('crash', 7, 1000));
    const raw = `t=1000;crash=${round('crash', 8).round_id}`;
    expect(resumePosition(hub, sel, raw, 2000).ignored).toMatch(/not seen/);
    setTimeout(() => hub.publish(d('crash', 8, 1100)), 50);
    expect(await awaitNamedRounds(hub, sel, raw, 2000)).toBe(true);
    expect(resumePosition(hub, sel, raw, 2000).position?.last.get('crash')).toBe(round('crash', 8).round_id);
  });

  it('gives up after its bound, and at once on a malformed id', async () => {
    const hub = new FanOutHub();
    hub.publish(d('crash', 7, 1000));
    const started = Date.now();
    expect(await awaitNamedRounds(hub, sel, `t=1000;crash=${round('crash', 9).round_id}`, 100)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(await awaitNamedRounds(hub, sel, 'nonsense', 5000)).toBe(false);
    expect(await awaitNamedRounds(hub, sel, undefined, 5000)).toBe(true);
  });
});
