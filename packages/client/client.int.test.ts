/**
 * The stream client in Node against real edges on the real broker, over each
 * transport it offers Node: WebSocket (the `ws` package as constructor), SSE, gRPC (node:http2),
 * and SSE through the gRPC proxy. Live rounds with latest and lifecycle messages; a resume from a
 * position on another edge; a failover when the edge goes away, with nothing lost or repeated; and
 * the refusals a subscription can meet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { Edge } from '../../services/edge/edge.ts';
import { createTestLog, round, startEdge, type TestLog } from '../../tests/support/edge.ts';
import { until } from '../../tests/support/poll.ts';
import { baseOf, droppable, lifecycleOf, recorder, transportFor } from '../../tests/support/rounds-client.ts';
import { createRoundsClient, type RoundsClient, type StateChange } from './src/index.ts';

const TRANSPORTS = ['websocket', 'sse', 'grpc', 'grpc-proxy'] as const;

let log: TestLog;
let edges: Edge[] = [];
let seq = 0;
const next = (slug: GameSlug) => round(slug, ++seq);
const clients: RoundsClient[] = [];
const track = (c: RoundsClient) => {
  clients.push(c);
  return c;
};

beforeAll(async () => {
  log = await createTestLog({ AUTH_REQUIRE_GRPC: 'false', EDGE_DRAIN_MS: 100 });
  await log.append([next('crash'), next('double'), next('slot'), next('wall-street')]);
  edges = [await startEdge(log), await startEdge(log)];
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const e of edges) await e.stop(0);
  await log?.close();
});

describe.each(TRANSPORTS)('stream client over %s (real edges)', (name) => {
  it('gives the latest rounds, then live ones in order, and lifecycle messages', async () => {
    const client = track(
      createRoundsClient({ baseUrl: baseOf(edges[0] as Edge), transport: transportFor(name, edges) }),
    );
    const states: string[] = [];
    client.onState((s) => states.push(s.state));
    const r = recorder({ latest: true, lifecycle: true });
    client.subscribe({ type: 'multiplier' }, r);
    await until(() => r.recovered.length === 1, 10_000, 'recovered');
    expect(r.recovered[0]).toEqual({ recovered: false, since: null, replayed: 0 });
    const initial = r.rounds.length;
    // SSE's `initial` is the newest round of the subscription; the others send each game's latest.
    expect(initial).toBe(name === 'sse' ? 1 : 2);
    expect(r.metas.every((m) => m.initial)).toBe(true);

    const crash = next('crash');
    const slot = next('slot');
    await log.appendEvents([...lifecycleOf(crash), crash, slot, next('double')]);
    await until(() => r.rounds.length === initial + 2, 10_000, 'live rounds');
    expect(r.rounds.slice(initial).map((x) => x.round_id)).toEqual([crash.round_id, slot.round_id]);
    expect(r.metas.slice(initial).every((m) => !m.initial && !m.replay && m.position.startsWith('t='))).toBe(
      true,
    );
    expect(r.rounds[initial]).toMatchObject({ game_slug: 'crash', game_type: 'multiplier' });
    await until(() => r.phases.length === 2, 10_000, 'lifecycle');
    expect(r.phases.map((m) => m.event)).toEqual(['round-opened', 'betting-closed']);
    expect(r.phases[0]).toEqual({
      event: 'round-opened',
      game_slug: 'crash',
      game_id: 1,
      round_id: crash.round_id,
      betting_opens_at: new Date(crash.finished_at - 10_000).toISOString(),
      betting_closes_at: new Date(crash.finished_at - 5_000).toISOString(),
      commitment: 'ab'.repeat(32),
      chain_epoch: 1,
      chain_index: crash.round_id % 1_000_000,
      speed: 1,
      timestamp: expect.any(Number),
    });
    expect(states).toEqual(['open']);
    client.close();
  });

  it('resumes from a position on another edge: the missed rounds once, then live', async () => {
    const first = track(
      createRoundsClient({ baseUrl: baseOf(edges[0] as Edge), transport: transportFor(name, edges) }),
    );
    const a = recorder();
    const sub = first.subscribe({ game: 'crash' }, a);
    await until(() => a.recovered.length === 1, 10_000, 'first subscription live');
    await log.append([next('crash'), next('crash')]);
    await until(() => a.rounds.length === 2, 10_000, 'two rounds');
    const position = sub.position as string;
    first.close();

    const missed = [next('crash'), next('crash'), next('crash')];
    await log.append([...missed, next('double')]);
    await until(
      () =>
        (edges[1] as Edge).hub.latest({ kind: 'game', slug: 'crash' })[0]?.round.round_id ===
        missed[2]?.round_id,
      10_000,
      'second edge has them',
    );
    const second = track(
      createRoundsClient({ baseUrl: baseOf(edges[1] as Edge), transport: transportFor(name, edges) }),
    );
    const b = recorder({ since: position });
    second.subscribe({ game: 'crash' }, b);
    await until(() => b.recovered.length === 1, 10_000, 'resumed');
    expect(b.recovered[0]).toEqual({ recovered: true, since: position, replayed: 3 });
    expect(b.ids('crash')).toEqual(missed.map((x) => x.round_id));
    if (name !== 'sse' && name !== 'grpc-proxy') expect(b.metas.every((m) => m.replay)).toBe(true);
    const live = next('crash');
    await log.append([live]);
    await until(() => b.rounds.length === 4, 10_000, 'live after the resume');
    expect(b.ids('crash').at(-1)).toBe(live.round_id);
    second.close();
  });

  it('refuses an unknown game; starts live, saying why, from a malformed position, one of other games and a future one', async () => {
    const client = track(
      createRoundsClient({ baseUrl: baseOf(edges[0] as Edge), transport: transportFor(name, edges) }),
    );
    const unknown = recorder();
    const malformed = recorder({ since: 'not-a-position' });
    const other = recorder({ since: 't=1;double=2000000000001' });
    const future = recorder({ since: `t=${Date.now() + 3_600_000}` });
    client.subscribe({ game: 'roulette' }, unknown);
    client.subscribe({ game: 'crash' }, malformed);
    client.subscribe({ type: 'slots' }, other);
    client.subscribe({ game: 'wall-street' }, future);
    await until(
      () => unknown.errors.length === 1 && [malformed, other, future].every((x) => x.recovered.length === 1),
      10_000,
      'answers',
    );
    expect(unknown.errors[0]).toMatchObject({ status: 404, error: 'Game not found' });
    // A refused position is no reason to give the subscription up: it goes on live, and says so.
    expect(malformed.recovered[0]).toEqual({
      recovered: false,
      since: 'not-a-position',
      replayed: 0,
      reason: expect.stringMatching(/^position refused: Invalid position/),
    });
    expect(other.recovered[0]).toEqual({
      recovered: false,
      since: 't=1;double=2000000000001',
      replayed: 0,
      reason: expect.stringMatching(/^position refused: .*double is not part/),
    });
    expect(future.recovered[0]).toMatchObject({ recovered: false, reason: 'position time in the future' });
    expect([malformed, other, future].flatMap((x) => x.errors)).toEqual([]);
    const crash = next('crash');
    const slot = next('slot');
    await log.append([crash, slot]);
    await until(() => malformed.rounds.length === 1 && other.rounds.length === 1, 10_000, 'live rounds');
    expect(malformed.ids('crash')).toEqual([crash.round_id]);
    expect(other.ids('slot')).toEqual([slot.round_id]);
    client.close();
  });

  it('resumes after a drop right after a lifecycle event: every round once, in order', async () => {
    const transport = droppable(transportFor(name, edges));
    const client = track(
      createRoundsClient({
        baseUrl: baseOf(edges[0] as Edge),
        transport,
        reconnect: { initialMs: 50, maxMs: 200 },
      }),
    );
    const r = recorder({ lifecycle: true });
    let comingId = 0;
    client.subscribe(
      { all: true },
      {
        ...r,
        onLifecycle: (m) => {
          r.phases.push(m);
          // The connection drops right after the coming round's betting-closed.
          if (m.round_id === comingId && m.event === 'betting-closed') transport.drop();
        },
      },
    );
    await until(() => r.recovered.length === 1, 10_000, 'live');
    const given = [next('crash'), next('double')];
    await log.append(given);
    await until(() => r.rounds.length === 2, 10_000, 'two rounds');
    // A round after them (the edge drops lifecycle events of rounds older than its game's latest).
    const coming = next('crash');
    comingId = coming.round_id;
    await log.appendEvents(lifecycleOf(coming));
    await until(() => transport.drops === 1, 10_000, 'the drop');
    const missed = [coming, next('slot'), next('crash'), next('double'), next('wall-street')];
    await log.append(missed);
    await until(() => r.recovered.length === 2, 10_000, 'resumed');
    const live = next('crash');
    await log.append([live]);
    await until(() => r.ids('crash').includes(live.round_id), 10_000, 'live after the resume');
    await new Promise((res) => setTimeout(res, 200));
    const all = [...given, ...missed, live];
    for (const g of ['crash', 'double', 'slot', 'wall-street'])
      expect(r.ids(g)).toEqual(all.filter((x) => x.game_slug === g).map((x) => x.round_id));
    expect(r.recovered[1]).toMatchObject({ recovered: true });
    expect(r.errors).toEqual([]);
    client.close();
  });

  it('fails over to the other edge when its edge stops, losing and repeating nothing', async () => {
    const pair = [await startEdge(log), await startEdge(log)];
    const client = track(
      createRoundsClient({
        baseUrl: pair.map(baseOf),
        transport: transportFor(name, pair),
        reconnect: { initialMs: 50, maxMs: 200 },
      }),
    );
    const states: StateChange[] = [];
    client.onState((s) => states.push(s));
    const r = recorder();
    client.subscribe({ type: 'multiplier' }, r);
    await until(() => r.recovered.length === 1, 10_000, 'live');
    const appended: number[] = [];
    let flowing = true;
    const flow = (async () => {
      while (flowing) {
        const batch = [next('crash'), next('slot')];
        await log.append(batch);
        appended.push(...batch.map((x) => x.round_id));
        await new Promise((res) => setTimeout(res, 40));
      }
    })();
    try {
      await until(() => r.rounds.length >= 6, 10_000, 'rounds before the stop');
      await (pair[0] as Edge).stop(100);
      await until(() => states.some((s) => s.state === 'reconnecting'), 10_000, 'reconnecting');
      const atStop = appended.length;
      await until(() => r.rounds.length >= atStop + 6, 15_000, 'rounds after the failover');
    } finally {
      flowing = false;
      await flow;
    }
    await until(() => r.rounds.length === appended.length, 15_000, 'every round');
    // Every round once, and per game in log order (round id = game id × 10^12 + sequence).
    for (const [g, id] of [
      ['crash', 1],
      ['slot', 3],
    ] as const)
      expect(r.ids(g)).toEqual(appended.filter((rid) => Math.floor(rid / 1e12) === id));
    expect(states.at(-1)?.state).toBe('open');
    client.close();
    await (pair[1] as Edge).stop(0);
  }, 60_000);
});
