/**
 * SSE resume (a reconnect with Last-Event-ID gets the missed rounds from the log before live
 * ones, none twice; also when the last event it saw was a lifecycle event) and bad
 * Last-Event-IDs (start live, no error loop), on the real broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { RoundFinished, StreamRound } from '../../../../rules/rounds/round.ts';
import {
  createTestLog,
  metricValue,
  round,
  startEdge,
  type TestLog,
} from '../../../../tests/support/edge.ts';
import { until } from '../../../../tests/support/poll.ts';
import { missedOrRepeated, type ResumingSse, resumingSse } from '../../../../tests/support/resuming-sse.ts';
import { lifecycleOf } from '../../../../tests/support/rounds-client.ts';
import { openSse, type SseClient } from '../../../../tests/support/sse-client.ts';
import type { Edge } from '../../edge.ts';
import { createSseTransport } from './sse.ts';

/** True when the rounds of each game come in increasing round-id order. */
const inGameOrder = (rs: StreamRound[]) =>
  rs.every((r, i) => rs.slice(0, i).every((p) => p.game_slug !== r.game_slug || p.round_id < r.round_id));
const data = (c: SseClient) => c.named().map((e) => JSON.parse(e.data as string) as StreamRound);

describe('SSE resume (real broker)', () => {
  let log: TestLog;
  let edge: Edge;
  let seq = 0;
  const next = (slug: GameSlug) => round(slug, ++seq);
  const opened: SseClient[] = [];
  const resuming: ResumingSse[] = [];
  const open = async (path: string, headers: Record<string, string> = {}, e = edge) => {
    const c = await openSse(e.httpPort, path, headers);
    opened.push(c);
    return c;
  };

  beforeAll(async () => {
    log = await createTestLog();
    await log.append([next('crash'), next('slot'), next('double')]);
    edge = await startEdge(log, [createSseTransport()]);
  });
  afterAll(async () => {
    for (const c of opened) c.close();
    for (const c of resuming) c.close();
    await edge?.stop(0);
    await log?.close();
  });

  it('resumes from Last-Event-ID with the missed rounds, then live, none twice (memory and log)', async () => {
    const a = await open('/sse/type/multiplier');
    await until(() => a.named().length === 1, 10_000, 'initial');
    const id0 = a.named()[0]?.id as string;
    const given = [next('crash'), next('slot')];
    await log.append(given);
    await until(() => a.named().length === 3, 10_000, 'two messages');
    const id2 = a.named()[2]?.id as string;
    a.close();
    const missed = [next('crash'), next('slot'), next('crash'), next('double')];
    await log.append(missed);
    await until(
      () => edge.hub.latest({ kind: 'game', slug: 'double' })[0]?.round.round_id === missed[3]?.round_id,
      10_000,
      'hub',
    );

    const fromMemory = await metricValue(edge, 'edge_sse_resumes_total', { source: 'memory' });
    const b = await open('/sse/type/multiplier', { 'Last-Event-ID': id2 });
    await until(() => b.named().length === 3, 10_000, 'missed rounds');
    const live = next('slot');
    await log.append([live]);
    await until(() => b.named().length === 4, 10_000, 'live');
    await new Promise((r) => setTimeout(r, 200));
    expect(b.named().map((e) => e.event)).toEqual(['message', 'message', 'message', 'message']);
    // Games live on different partitions, so only the order within a game is defined.
    const expected = [...missed.slice(0, 3), live].map((r) => r.round_id);
    expect(
      data(b)
        .map((r) => r.round_id)
        .sort(),
    ).toEqual(expected.sort());
    expect(inGameOrder(data(b))).toBe(true);
    expect(new Set(b.named().map((e) => e.id)).size).toBe(4);
    expect(await metricValue(edge, 'edge_sse_resumes_total', { source: 'memory' })).toBe(fromMemory + 1);

    // The query-parameter form, from further back: everything after `initial`, once.
    const q = await open(`/sse/type/multiplier?lastEventId=${encodeURIComponent(id0)}`);
    const all = [...given, ...missed.slice(0, 3), live].map((r) => r.round_id);
    await until(() => q.named().length === all.length, 10_000, 'resume by query');
    await new Promise((r) => setTimeout(r, 200));
    expect(
      data(q)
        .map((r) => r.round_id)
        .sort(),
    ).toEqual([...all].sort());
    expect(inGameOrder(data(q))).toBe(true);

    // A second edge started now has none of these in memory: the same resume reads the log.
    const other = await startEdge(log, [createSseTransport()]);
    try {
      const fromLog = await open('/sse/type/multiplier', { 'Last-Event-ID': id0 }, other);
      // Appended while the log is being read: they may come both from the read and live; once.
      const during = [next('crash'), next('slot')];
      await log.append(during);
      await until(() => fromLog.named().length === all.length + 2, 15_000, 'resume from the log');
      const after = next('crash');
      await log.append([after]);
      await until(() => fromLog.named().length === all.length + 3, 10_000, 'live after log resume');
      await new Promise((r) => setTimeout(r, 200));
      const want = [...all, ...during.map((r) => r.round_id), after.round_id];
      expect(
        data(fromLog)
          .map((r) => r.round_id)
          .sort(),
      ).toEqual(want.sort());
      expect(inGameOrder(data(fromLog))).toBe(true);
      expect(await metricValue(other, 'edge_sse_resumes_total', { source: 'log' })).toBe(1);
      expect(await metricValue(other, 'edge_sse_resumes_total', { source: 'memory' })).toBe(0);
      expect(fromLog.named().every((e) => e.event === 'message')).toBe(true);
      fromLog.close();
    } finally {
      await other.stop(0);
    }
  });

  it('resumes a browser-like client on /sse/all?lifecycle=1 dropped right after a lifecycle event: nothing lost, no initial', async () => {
    // The dashboard's stream: EventSource sends back the id of the last event it saw, here a lifecycle event's.
    const c = resumingSse([edge.httpPort], '/sse/all?lifecycle=1', 0, 50);
    resuming.push(c);
    await c.ready;
    const rounds: RoundFinished[] = [next('crash'), next('double')];
    const coming = next('crash');
    await log.append(rounds);
    await until(
      () => (c.rounds.get('double') ?? []).includes(rounds[1]?.round_id as number),
      10_000,
      'rounds',
    );
    await log.appendEvents(lifecycleOf(coming));
    await until(() => c.lastEvent === 'betting-closed', 10_000, 'lifecycle');
    c.drop();
    const missed = [coming, next('double'), next('wall-street'), next('crash')];
    rounds.push(...missed);
    await log.append(missed);
    await until(() => c.connects === 2, 10_000, 'reconnected');
    const live = next('slot');
    rounds.push(live);
    await log.append([live]);
    await until(() => (c.rounds.get('slot') ?? []).includes(live.round_id), 10_000, 'live after the resume');
    await new Promise((r) => setTimeout(r, 200));
    c.close();
    const logged = new Map<string, number[]>();
    for (const r of rounds) logged.set(r.game_slug, [...(logged.get(r.game_slug) ?? []), r.round_id]);
    expect(missedOrRepeated(c, logged, ['crash', 'double', 'slot'])).toEqual([]);
    // The log had no wall-street round when the stream started (no start position to count from).
    expect(c.rounds.get('wall-street')).toEqual(logged.get('wall-street'));
    expect(c.lateInitials).toBe(0);
  });

  it.each([
    ['garbage', 'not-an-id'],
    ['no time', 'crash=1000000000001'],
    ['a game outside the subscription', 't=1;double=2000000000001'],
    ['a repeated game', 't=1;crash=1;crash=2'],
    ['too long', `t=1;${'x'.repeat(300)}`],
    ['a time in the future', `t=${Date.now() + 86_400_000}`],
    ['a round this edge never saw', `t=${Date.now()};crash=1999999999999`],
  ])('ignores a Last-Event-ID with %s and starts live with `initial`', async (_case, id) => {
    const c = await open('/sse/crash', { 'Last-Event-ID': id });
    expect(c.res.statusCode).toBe(200);
    await until(() => c.named().length === 1, 10_000, 'initial');
    expect(c.named()[0]?.event).toBe('initial');
    expect(data(c)[0]?.round_id).toBe(edge.hub.latest({ kind: 'game', slug: 'crash' })[0]?.round.round_id);
    c.close();
  });
});
