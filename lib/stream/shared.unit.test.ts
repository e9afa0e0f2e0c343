import { describe, expect, it } from 'vitest';
import { round } from '../../tests/support/edge.ts';
import { lifecycleOf } from '../../tests/support/rounds-client.ts';
import { type CatchUpCursor, CatchUpScheduler, END } from './catch-up.ts';
import { Delivery, FanOutHub, type Selection } from './hub.ts';
import { LifecycleUpdate } from './lifecycle.ts';
import { formatPosition } from './position.ts';
import { SharedTopics, type TopicServer } from './shared.ts';
import type { StreamSink, StreamSubscription, SubscriptionHost } from './subscriber.ts';
import { startSubscription } from './subscriber.ts';

/** A server with topics as uWS has them: publish reaches the members of the moment. */
class FakeServer implements TopicServer {
  readonly topics = new Map<string, Set<string[]>>();
  publish(topic: string, text: string): void {
    for (const socket of this.topics.get(topic) ?? []) socket.push(text);
  }
  members(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }
  join(topic: string, socket: string[]): void {
    const s = this.topics.get(topic) ?? new Set();
    s.add(socket);
    this.topics.set(topic, s);
  }
  leave(topic: string, socket: string[]): void {
    this.topics.get(topic)?.delete(socket);
  }
}

/** One socket: what it was sent, in order, whether by its own sends or through topics. */
function sink(server: FakeServer, topics: SharedTopics, envelope: boolean): StreamSink & { got: string[] } {
  const got: string[] = [];
  const form = envelope ? 'envelope' : 'json';
  return {
    got,
    round: (d, _kind, sub) => got.push(envelope ? d.envelope(sub.selection) : d.streamJson(sub.selection)),
    lifecycle: (_u, e, sub) => got.push(e.for(sub.selection)),
    recovered: () => {},
    blocked: () => false,
    gone: () => false,
    overflow: () => {},
    failed: () => {},
    joinShared(sub: StreamSubscription, lifecycle: boolean) {
      server.join(topics.topic(sub.selection, form), got);
      if (lifecycle) server.join(topics.topic(sub.selection, 'lifecycle'), got);
      return true;
    },
    leaveShared(sub: StreamSubscription) {
      server.leave(topics.topic(sub.selection, form), got);
      server.leave(topics.topic(sub.selection, 'lifecycle'), got);
    },
  };
}

const crash: Selection = { kind: 'game', slug: 'crash' };
const d = (seq: number) => new Delivery(round('crash', seq), 1000 + seq, 0, BigInt(seq));
const idOf = (text: string) => (JSON.parse(text) as { round_id: number }).round_id;

/** A catch-up cursor that waits for `gate` before giving `rounds`. */
function gated(rounds: Delivery[], gate: Promise<void>): CatchUpCursor {
  let loaded = false;
  let i = 0;
  return {
    next: () => (!loaded ? null : i < rounds.length ? (rounds[i++] as Delivery) : END),
    load: async () => {
      await gate;
      loaded = true;
    },
  };
}

function host(hub: FanOutHub, cursor: CatchUpCursor): SubscriptionHost {
  return {
    hub,
    scheduler: new CatchUpScheduler({ perSubscriberRate: 1e6, totalRate: 1e6, sliceMs: 1 }),
    positions: () => new Map(),
    plan: async () => ({ cursor, source: 'memory' }),
  };
}

describe('shared topics: a live subscription on the server’s own fan-out', () => {
  it('hands over from catch-up and held rounds to the topic with no gap and no repeat', async () => {
    const hub = new FanOutHub(0);
    const server = new FakeServer();
    let delivered = 0;
    const topics = new SharedTopics(hub, server, (n) => {
      delivered += n;
    });
    for (const seq of [1, 2]) hub.publish(d(seq));
    let open = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    // The catch-up reads up to round 3, which also arrives live while it waits: given once.
    const s = sink(server, topics, false);
    const position = { t: 1001, last: new Map([['crash' as const, round('crash', 1).round_id]]) };
    const { sub, started } = startSubscription(
      host(hub, gated([d(2), d(3)], gate)),
      crash,
      s,
      { kind: 'resume', position, raw: 'p' },
      { latest: 'none', lifecycle: false },
    );
    for (const seq of [3, 4]) hub.publish(d(seq));
    expect(s.got).toEqual([]);
    open();
    await started;
    expect(sub.shared).toBe(true);
    expect(hub.size).toBe(0); // off the hub's own list: the topic feeds it
    for (const seq of [5, 6]) hub.publish(d(seq));
    expect(s.got.map(idOf)).toEqual([2, 3, 4, 5, 6].map((q) => round('crash', q).round_id));
    expect(delivered).toBe(2);
    expect(sub.positionText()).toBe(
      formatPosition(crash, { t: 1006, last: new Map([['crash', round('crash', 6).round_id]]) }),
    );
    sub.close();
    hub.publish(d(7));
    expect(s.got).toHaveLength(5);
    expect(server.members('json:crash')).toBe(0);
  });

  it('shares one envelope text per selection, and lifecycle envelopes only with those who asked', async () => {
    const hub = new FanOutHub(0);
    const server = new FakeServer();
    const topics = new SharedTopics(hub, server, () => {});
    const fresh = { kind: 'fresh' } as const;
    const none = gated([], Promise.resolve());
    const a = sink(server, topics, true);
    const b = sink(server, topics, true);
    await startSubscription(host(hub, none), crash, a, fresh, { latest: 'none', lifecycle: true }).started;
    await startSubscription(host(hub, none), crash, b, fresh, { latest: 'none', lifecycle: false }).started;
    const r = round('crash', 9);
    const [opened] = lifecycleOf(r);
    hub.publishLifecycle(new LifecycleUpdate(opened, 5));
    hub.publish(new Delivery(r, 6, 0, 9n));
    expect(a.got.map((t) => JSON.parse(t).type)).toEqual(['lifecycle', 'round']);
    expect(b.got.map((t) => JSON.parse(t).type)).toEqual(['round']);
    expect(a.got[1]).toBe(b.got[0]);
    expect(JSON.parse(b.got[0] as string)).toMatchObject({
      sub: 'game:crash',
      data: { round_id: r.round_id },
    });
  });
});
