/**
 * Resume across a dropped connection in headless Chromium, against an in-process Node edge on the
 * real broker: the browser's own EventSource on the dashboard's stream (`/sse/all?lifecycle=1`),
 * and the stream client (packages/client, the bundle the pages load) over SSE and WebSocket. The
 * connection is cut right after a round's lifecycle events by a TCP relay between the page and the
 * edge, as a network failure would; every round must then arrive once, in order. A position the
 * edge refuses must not end the client's subscription either.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundFinished } from '../../rules/rounds/round.ts';
import type { Edge } from '../../services/edge/edge.ts';
import { assertChromium, BROWSER_ARGS, CHROMIUM } from '../support/chromium.ts';
import { openPageClient, pageRecord, serveClientBundle } from '../support/client-page.ts';
import { createTestLog, round, startEdge, type TestLog } from '../support/edge.ts';
import { waitFor } from '../support/poll.ts';
import { lifecycleOf } from '../support/rounds-client.ts';

/** A TCP relay to 127.0.0.1:`target` whose connections can all be cut at once. */
interface Relay {
  readonly port: number;
  /** Destroys every open connection (both sides), as a lost network would. */
  cut(): void;
  close(): Promise<void>;
}

async function relay(target: number): Promise<Relay> {
  const open = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = tcpConnect(target, '127.0.0.1');
    for (const s of [down, up]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => {
        down.destroy();
        up.destroy();
      });
    }
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : 0,
    cut: () => {
      for (const s of open) s.destroy();
    },
    close: () =>
      new Promise((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

let log: TestLog;
let edge: Edge;
let http: Relay;
let ws: Relay;
let browser: Browser;
let page: Page;
let site: Awaited<ReturnType<typeof serveClientBundle>>;
let seq = 0;
const next = (slug: GameSlug) => round(slug, ++seq);
/** Every round appended, in log order. */
const appended: RoundFinished[] = [];
const append = async (rounds: RoundFinished[]) => {
  await log.append(rounds);
  appended.push(...rounds);
};
/** Round ids of `game` appended after round `after` of it (exclusive). */
const appendedAfter = (game: string, after: number) =>
  appended.filter((r) => r.game_slug === game && r.round_id > after).map((r) => r.round_id);

beforeAll(async () => {
  assertChromium();
  log = await createTestLog({ AUTH_REQUIRE_GRPC: 'false', EDGE_SSE_HEARTBEAT_MS: 300 });
  await append([next('crash'), next('double'), next('slot'), next('wall-street')]);
  edge = await startEdge(log);
  http = await relay(edge.httpPort);
  ws = await relay(edge.portOf('ws'));
  site = await serveClientBundle();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...BROWSER_ARGS] });
  page = await browser.newPage();
  await page.goto(site.origin);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await http?.close();
  await ws?.close();
  await edge?.stop(0);
  await log?.close();
});

/**
 * Appends rounds of two games, then the lifecycle events of a crash round after them; returns that
 * round. With `delivered`, the lifecycle events are appended only once both rounds have reached the
 * page: the two games sit on different partitions, so otherwise the double round may arrive after
 * the crash round's lifecycle events and be the last event before the drop.
 */
async function roundsThenLifecycle(
  seen: () => Promise<string[]>,
  delivered?: (r: RoundFinished) => Promise<boolean>,
): Promise<RoundFinished> {
  const before = [next('crash'), next('double')];
  await append(before);
  if (delivered)
    for (const r of before)
      await waitFor(`round ${r.round_id} in the page`, async () => ((await delivered(r)) ? true : undefined));
  const coming = next('crash');
  await log.appendEvents(lifecycleOf(coming));
  await waitFor('the lifecycle events in the page', async () =>
    (await seen()).includes(`betting-closed ${coming.round_id}`) ? true : undefined,
  );
  return coming;
}

describe('resume after a drop right after a lifecycle event, in Chromium', () => {
  it("the browser's EventSource on /sse/all?lifecycle=1 gets every round once, in order, no second initial", async () => {
    await page.evaluate((url) => {
      const w = window as unknown as {
        __es: { event: string; id: string; data: string }[];
        __esClose(): void;
      };
      w.__es = [];
      const es = new EventSource(url);
      w.__esClose = () => es.close();
      for (const event of ['initial', 'message', 'round-opened', 'betting-closed'])
        es.addEventListener(event, (e) => {
          const m = e as MessageEvent;
          w.__es.push({ event, id: m.lastEventId, data: m.data });
        });
    }, `http://127.0.0.1:${http.port}/sse/all?lifecycle=1`);
    const events = () =>
      page.evaluate(
        () => (window as unknown as { __es: { event: string; id: string; data: string }[] }).__es,
      );
    const initial = await waitFor('initial', async () => (await events()).find((e) => e.event === 'initial'));
    const seen = async () => (await events()).map((e) => `${e.event} ${JSON.parse(e.data).round_id}`);
    const coming = await roundsThenLifecycle(seen, async (r) =>
      (await seen()).includes(`message ${r.round_id}`),
    );
    // The connection drops right after the lifecycle events; EventSource reconnects by itself.
    expect((await events()).at(-1)?.event).toBe('betting-closed');
    http.cut();
    const missed = [coming, next('double'), next('slot'), next('crash'), next('wall-street')];
    await append(missed);
    const last = missed.at(-1) as RoundFinished;
    await waitFor(
      'the rounds after the reconnect',
      async () => {
        const e = await events();
        return e.some((x) => x.event !== 'initial' && JSON.parse(x.data).round_id === last.round_id)
          ? e
          : undefined;
      },
      15_000,
    );
    await new Promise((r) => setTimeout(r, 300));
    const all = await events();
    expect(all.filter((e) => e.event === 'initial')).toHaveLength(1);
    // From the first event's id (the stream's start), every round of each game once, in order.
    const start = new Map(
      initial.id
        .split(';')
        .slice(1)
        .map((p) => p.split('=') as [string, string]),
    );
    for (const g of ['crash', 'double', 'slot', 'wall-street'])
      expect(
        all
          .filter((e) => e.event === 'message')
          .map((e) => JSON.parse(e.data) as RoundFinished)
          .filter((r) => r.game_slug === g)
          .map((r) => r.round_id),
      ).toEqual(appendedAfter(g, Number(start.get(g))));
    await page.evaluate(() => (window as unknown as { __esClose(): void }).__esClose());
  });

  it.each(['sse', 'websocket'] as const)(
    'the stream client over %s resumes from its position: every round once, in order, recovered true',
    async (kind) => {
      const id = `drop-${kind}`;
      const base = `http://127.0.0.1:${http.port}`;
      await openPageClient(
        page,
        id,
        kind,
        { bases: [base], wsUrls: { [base]: `ws://127.0.0.1:${ws.port}/ws/` } },
        [{ all: true }],
        { lifecycle: true },
      );
      await waitFor('live', async () =>
        (await pageRecord(page, id)).recovered.length === 1 ? true : undefined,
      );
      const start = (await pageRecord(page, id)).starts.all as string;
      const coming = await roundsThenLifecycle(async () => (await pageRecord(page, id)).phases);
      // A heartbeat comes after the lifecycle events before the drop (the client reads SSE heartbeats
      // with the stream's last id).
      await new Promise((r) => setTimeout(r, 700));
      (kind === 'sse' ? http : ws).cut();
      const missed = [coming, next('double'), next('slot'), next('crash'), next('wall-street')];
      await append(missed);
      const rec = await waitFor(
        'resumed, with every round',
        async () => {
          const r = await pageRecord(page, id);
          return r.recovered.length >= 2 && r.rounds['wall-street']?.includes(missed[4]?.round_id as number)
            ? r
            : undefined;
        },
        15_000,
      );
      const from = new Map(
        start
          .split(';')
          .slice(1)
          .map((p) => p.split('=') as [string, string]),
      );
      for (const g of ['crash', 'double', 'slot', 'wall-street'])
        expect(rec.rounds[g] ?? []).toEqual(appendedAfter(g, Number(from.get(g))));
      expect(rec.recovered[1]).toMatchObject({ recovered: true });
      expect(rec.errors).toEqual([]);
      expect(rec.states.some((s) => s.startsWith('reconnecting'))).toBe(true);
      await page.evaluate(
        (i) =>
          (window as unknown as { __clients: Record<string, { client: { close(): void } }> }).__clients[
            i
          ]?.client.close(),
        id,
      );
    },
  );

  it.each(['sse', 'websocket'] as const)(
    'the stream client over %s goes on live from a position the edge refuses, and says so',
    async (kind) => {
      const id = `refused-${kind}`;
      const base = `http://127.0.0.1:${edge.httpPort}`;
      await openPageClient(
        page,
        id,
        kind,
        { bases: [base], wsUrls: { [base]: `ws://127.0.0.1:${edge.portOf('ws')}/ws/` } },
        [{ game: 'crash' }],
        { since: 'not-a-position' },
      );
      const first = await waitFor('recovered', async () => (await pageRecord(page, id)).recovered[0]);
      expect(first).toEqual({
        recovered: false,
        since: 'not-a-position',
        replayed: 0,
        reason: expect.stringMatching(/^position refused: Invalid position/),
      });
      const live = next('crash');
      await append([live]);
      const rec = await waitFor('a live round', async () => {
        const r = await pageRecord(page, id);
        return r.rounds.crash?.length ? r : undefined;
      });
      expect(rec.rounds.crash).toEqual([live.round_id]);
      expect(rec.errors).toEqual([]);
      await page.evaluate(
        (i) =>
          (window as unknown as { __clients: Record<string, { client: { close(): void } }> }).__clients[
            i
          ]?.client.close(),
        id,
      );
    },
  );
});
