import { describe, expect, it } from 'vitest';
import { GAME_SLUGS, GAME_TYPES } from '../../rules/games/catalog.ts';
import { round } from '../../tests/support/edge.ts';
import { lifecycleOf } from '../../tests/support/rounds-client.ts';
import { Delivery, FanOutHub, type LifecycleEnvelopes, type Subscription, selectionKey } from './hub.ts';
import { LifecycleUpdate } from './lifecycle.ts';

const at = (slug: 'crash' | 'slot' | 'double', seq: number, t: number) =>
  new Delivery(round(slug, seq), t, 0, BigInt(seq));

describe('FanOutHub positions and envelopes', () => {
  it('gives a live round the position of its selection, shared by every subscriber of it', () => {
    const hub = new FanOutHub(50);
    hub.publish(at('crash', 1, 100));
    const d = at('slot', 1, 200);
    hub.publish(d);
    const mult = { kind: 'type', type: 'multiplier' } as const;
    expect(d.position(mult)).toBe(
      `t=100;crash=${round('crash', 1).round_id};slot=${round('slot', 1).round_id}`,
    );
    // double has no round yet: the hub's origin stands for it.
    expect(d.position({ kind: 'all' })).toBe(
      `t=50;crash=${round('crash', 1).round_id};slot=${round('slot', 1).round_id}`,
    );
    expect(d.position(mult)).toBe(d.position({ kind: 'type', type: 'multiplier' })); // cached text
    const env = JSON.parse(d.envelope(mult));
    expect(env).toEqual({
      type: 'round',
      sub: 'type:multiplier',
      position: d.position(mult),
      prev: null,
      data: d.streamForm(mult),
    });
    const next = at('slot', 2, 300);
    hub.publish(next);
    expect(JSON.parse(next.envelope(mult)).prev).toBe(round('slot', 1).round_id);
    expect(hub.position(mult)).toBe(next.position(mult));
  });

  it('keeps selection keys apart (no game slug is a type name)', () => {
    const keys = [
      ...GAME_SLUGS.map((slug) => selectionKey({ kind: 'game', slug })),
      ...GAME_TYPES.map((type) => selectionKey({ kind: 'type', type })),
      'all',
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('does not count its taps as subscribers, and feeds them', () => {
    const hub = new FanOutHub();
    const got: Delivery[] = [];
    const tap: Subscription = { selection: { kind: 'all' }, deliver: (d) => got.push(d) };
    const off = hub.tap(tap);
    hub.publish(at('crash', 1, 1));
    expect(hub.size).toBe(0);
    expect(got).toHaveLength(1);
    off();
  });
});

describe('FanOutHub lifecycle', () => {
  const crash = { kind: 'game', slug: 'crash' } as const;
  const r = round('crash', 10);
  const [opened, closed] = lifecycleOf(r);

  it('routes lifecycle updates to their subscribers only, and keeps the current phase until the round finishes', () => {
    const hub = new FanOutHub();
    const seen: string[] = [];
    hub.subscribeLifecycle({
      selection: { kind: 'type', type: 'multiplier' },
      lifecycle: (_u, e: LifecycleEnvelopes) =>
        seen.push(JSON.parse(e.for({ kind: 'type', type: 'multiplier' })).data.event),
    });
    hub.subscribeLifecycle({
      selection: { kind: 'game', slug: 'double' },
      lifecycle: () => seen.push('double?'),
    });
    expect(hub.publishLifecycle(new LifecycleUpdate(opened, 1))).toBe(true);
    expect(hub.currentPhases(crash).map((u) => u.message.event)).toEqual(['round-opened']);
    expect(hub.publishLifecycle(new LifecycleUpdate(opened, 1))).toBe(false); // repeated
    expect(hub.publishLifecycle(new LifecycleUpdate(closed, 2))).toBe(true);
    expect(hub.currentPhases(crash).map((u) => u.message.event)).toEqual(['betting-closed']);
    hub.publish(new Delivery(r, 3, 0, 1n));
    expect(hub.currentPhases(crash)).toEqual([]);
    expect(hub.publishLifecycle(new LifecycleUpdate(closed, 4))).toBe(false); // its round finished
    expect(seen).toEqual(['round-opened', 'betting-closed']);
  });

  it('writes the documented JSON form', () => {
    const u = new LifecycleUpdate(opened, 1234);
    expect(JSON.parse(u.json())).toEqual({
      event: 'round-opened',
      game_slug: 'crash',
      game_id: 1,
      round_id: r.round_id,
      betting_opens_at: new Date(opened.betting_opens_at).toISOString(),
      betting_closes_at: new Date(opened.betting_closes_at).toISOString(),
      commitment: 'ab'.repeat(32),
      chain_epoch: 1,
      chain_index: opened.chain_index,
      speed: 1,
      timestamp: 1234,
    });
    expect(JSON.parse(new LifecycleUpdate(closed, 99).json())).toEqual({
      event: 'betting-closed',
      game_slug: 'crash',
      game_id: 1,
      round_id: r.round_id,
      at: new Date(closed.at).toISOString(),
      timestamp: 99,
    });
  });
});

describe('FanOutHub deduplication', () => {
  it('publishes a round of a lower id after a higher one once, drops a round published before, keeps the highest as latest', () => {
    const hub = new FanOutHub();
    const got: number[] = [];
    hub.subscribe({ selection: { kind: 'game', slug: 'slot' }, deliver: (d) => got.push(d.round.round_id) });
    const ids = [9, 6, 7, 6, 9, 10].map((seq) => round('slot', seq).round_id);
    const published = [9, 6, 7, 6, 9, 10].map((seq) => hub.publish(at('slot', seq, 100 + seq)));
    expect(published).toEqual([true, true, true, false, false, true]);
    expect(got).toEqual([ids[0], ids[1], ids[2], ids[5]]);
    expect(hub.latest({ kind: 'game', slug: 'slot' }).map((d) => d.round.round_id)).toEqual([ids[5]]);
  });

  it('keeps the current phase when a RoundFinished of another round is published', () => {
    const hub = new FanOutHub();
    const [opened] = lifecycleOf(round('double', 4));
    const u = new LifecycleUpdate(opened as NonNullable<typeof opened>, 1);
    expect(hub.publishLifecycle(u)).toBe(true);
    hub.publish(at('double', 8, 2));
    expect(hub.currentPhases({ kind: 'game', slug: 'double' })).toEqual([u]);
    hub.publish(at('double', 4, 3));
    expect(hub.currentPhases({ kind: 'game', slug: 'double' })).toEqual([]);
  });
});
