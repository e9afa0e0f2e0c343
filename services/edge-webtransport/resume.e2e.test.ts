/**
 * WebTransport resume against the Deno edge as a process, with headless Chromium:
 * a plain session's `since=` catch-up comes on a reliable stream that ends with FIN when complete
 * and is reset when the position could not be honoured; the envelope protocol with the stream
 * client (packages/client in the page): several subscriptions on one session, lifecycle messages,
 * a resume, and the refusals (unknown game, bad positions, the subscription limit).
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRound, encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { roundsOf } from '../../packages/client/src/index.ts';
import type { RoundEvent, RoundFinished } from '../../rules/rounds/round.ts';
import { BROWSER_ARGS, CHROMIUM } from '../../tests/support/chromium.ts';
import { openPageClient, pageRecord, serveClientBundle } from '../../tests/support/client-page.ts';
import { lifecycleOf } from '../../tests/support/rounds-client.ts';
import { syntheticRound } from '../../tests/support/rounds-fixture.ts';
import {
  createWtTestBed,
  startWtEdge,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../../tests/support/webtransport.ts';

let bed: WtTestBed;
let edge: WtEdgeProcess;
let quicPort = 0;
let httpPort = 0;
let browser: Browser;
let page: Page;
let site: Awaited<ReturnType<typeof serveClientBundle>>;
let seq = 0;

const next = (game: 'crash' | 'double' | 'slot'): RoundFinished =>
  syntheticRound({ crash: 0, double: 1, slot: 2 }[game], ++seq, Date.now());

async function append(events: readonly RoundEvent[]): Promise<void> {
  await bed.producer.send({
    topic: topicName(bed.config, 'rounds'),
    messages: events.map((e) => ({
      key: e.game_slug,
      value: e.type === 'RoundFinished' ? encodeRound(e) : encodeRoundEvent(e),
    })),
  });
}

/** Opens a plain session with `query` and reads its reliable stream: lines, and how it ended. */
function plainCatchUp(query: string): Promise<{ lines: string[]; end: string }> {
  return page.evaluate(
    async ({ url, hashUrl }) => {
      const cert = (await (await fetch(hashUrl)).json()) as { hash: string };
      const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
      const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
      await wt.ready;
      const streams = wt.incomingUnidirectionalStreams.getReader();
      const { value: stream } = await streams.read();
      const reader = (stream as ReadableStream<Uint8Array>).getReader();
      let text = '';
      let end = 'fin';
      try {
        for (;;) {
          const { value: chunk, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(chunk);
        }
      } catch {
        end = 'reset';
      }
      wt.close();
      return { lines: text.split('\n').filter((l) => l !== ''), end };
    },
    { url: `https://127.0.0.1:${quicPort}/wt?${query}`, hashUrl: `http://127.0.0.1:${httpPort}/cert-hash` },
  );
}

interface Said {
  readonly type: string;
  readonly position: string | null;
  readonly initial?: boolean;
  readonly data: unknown;
}

/**
 * Opens an envelope session with `query` in the page, as `window.__wt[id]`: every envelope of its
 * reliable streams and datagrams in arrival order, and its close.
 * @returns `id`.
 */
async function openEnvelopeSession(id: string, query: string): Promise<string> {
  await page.evaluate(
    async ({ id, url, hashUrl }) => {
      const w = window as unknown as { __wt: Record<string, { got: unknown[]; close(): void }> };
      w.__wt ??= {};
      const cert = (await (await fetch(hashUrl)).json()) as { hash: string };
      const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
      const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
      const got: unknown[] = [];
      w.__wt[id] = { got, close: () => wt.close() };
      await wt.ready;
      const lines = async (stream: ReadableStream<Uint8Array>) => {
        const reader = stream.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value: chunk, done } = await reader.read();
          if (done) return;
          buf += decoder.decode(chunk, { stream: true });
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            if (nl > 0) got.push(JSON.parse(buf.slice(0, nl)));
            buf = buf.slice(nl + 1);
          }
        }
      };
      void (async () => {
        const streams = wt.incomingUnidirectionalStreams.getReader();
        for (;;) {
          const { value: stream, done } = await streams.read();
          if (done) return;
          void lines(stream).catch(() => {});
        }
      })().catch(() => {});
      void (async () => {
        const datagrams = wt.datagrams.readable.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { value: d, done } = await datagrams.read();
          if (done) return;
          got.push(JSON.parse(decoder.decode(d)));
        }
      })().catch(() => {});
    },
    {
      id,
      url: `https://127.0.0.1:${quicPort}/wt?${query}`,
      hashUrl: `http://127.0.0.1:${httpPort}/cert-hash`,
    },
  );
  return id;
}

/** What envelope session `id` has received so far. */
function said(id: string): Promise<Said[]> {
  return page.evaluate(
    (i) => (window as unknown as { __wt: Record<string, { got: Said[] }> }).__wt[i]?.got ?? [],
    id,
  );
}

const roundIds = (s: readonly Said[]) =>
  s.filter((m) => m.type === 'round').map((m) => (m.data as { round_id: number }).round_id);

beforeAll(async () => {
  bed = await createWtTestBed('t-wt-resume-');
  await append([next('crash'), next('double'), next('slot')]);
  edge = startWtEdge({ TOPIC_NAMESPACE: bed.ns, WT_DEV_CERT_DIR: bed.certDir, EDGE_SSE_HEARTBEAT_MS: '500' });
  ({ quicPort, httpPort } = await edge.started);
  await waitFor('/ready', async () =>
    (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200 ? true : undefined,
  );
  site = await serveClientBundle();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...BROWSER_ARGS] });
  page = await browser.newPage();
  await page.goto(site.origin);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await edge?.kill();
  await bed?.close();
});

const targets = () => {
  const base = `http://127.0.0.1:${httpPort}`;
  return {
    bases: [base],
    wtUrls: { [base]: `https://127.0.0.1:${quicPort}/wt` },
    certHashUrl: `${base}/cert-hash`,
  };
};

describe('WebTransport resume (Deno edge, Chromium)', () => {
  it('replays a plain since= on a reliable stream in the seed’s form, then its verdict, then FIN', async () => {
    const first = next('crash');
    await append([first]);
    await waitFor('the edge has it', async () => {
      const r = await plainCatchUp(`game=crash&latest=1`);
      return r.lines.some((l) => JSON.parse(l).round_id === first.round_id) ? r : undefined;
    });
    const since = `t=${Date.now() - 60_000};crash=${first.round_id}`;
    const missed = [next('crash'), next('crash')];
    await append(missed);
    const got = await waitFor('the missed rounds', async () => {
      const r = await plainCatchUp(`game=crash&since=${encodeURIComponent(since)}`);
      return r.lines.length === 3 ? r : undefined;
    });
    expect(got.end).toBe('fin');
    expect(got.lines.slice(0, 2).map((l) => JSON.parse(l).round_id)).toEqual(missed.map((r) => r.round_id));
    expect(JSON.parse(got.lines[2] as string)).toEqual({ recovered: true, since, replayed: 2 });
    expect(Object.keys(JSON.parse(got.lines[0] as string)).sort()).toEqual(
      ['extras', 'finished_at', 'game_id', 'game_slug', 'game_type', 'round_id', 'timestamp'].sort(),
    );
    const future = `t=${Date.now() + 3_600_000}`;
    const ahead = await plainCatchUp(`game=crash&since=${encodeURIComponent(future)}`);
    expect(ahead.end).toBe('fin');
    expect(ahead.lines.map((l) => JSON.parse(l))).toEqual([
      { recovered: false, since: future, replayed: 0, reason: 'position time in the future' },
    ]);
  });

  it('carries several subscriptions and their lifecycle on one session with the stream client, and resumes', async () => {
    await openPageClient(page, 'wt', 'webtransport', targets(), [{ type: 'multiplier' }, { game: 'double' }]);
    await waitFor('subscribed', async () =>
      Object.keys((await pageRecord(page, 'wt')).starts).length === 2 ? true : undefined,
    );
    const crash = next('crash');
    const sent = [crash, next('double'), next('slot'), next('crash')];
    await append([...lifecycleOf(crash), ...sent]);
    const rec = await waitFor('live rounds', async () => {
      const r = await pageRecord(page, 'wt');
      return Object.values(r.rounds).flat().length === 4 ? r : undefined;
    });
    expect(rec.rounds.crash).toEqual([sent[0]?.round_id, sent[3]?.round_id]);
    expect(rec.rounds.double).toEqual([sent[1]?.round_id]);
    expect(rec.rounds.slot).toEqual([sent[2]?.round_id]);
    expect(rec.errors).toEqual([]);
    // A new client from the first one's start positions gets the same rounds, replayed.
    const starts = rec.starts;
    await page.evaluate(() =>
      (
        window as unknown as { __clients: Record<string, { client: { close(): void } }> }
      ).__clients.wt?.client.close(),
    );
    await page.evaluate(
      ({ starts, targets }) => {
        // biome-ignore lint/suspicious/noExplicitAny: the bundle's API, untyped in the page.
        const w = window as unknown as { rc: any; __replayed: number[] };
        w.__replayed = [];
        const client = w.rc.createRoundsClient({
          baseUrl: targets.bases,
          transport: w.rc.webTransport({
            url: (b: string) => targets.wtUrls[b],
            certificateHashes: w.rc.certificateHashesFrom(targets.certHashUrl),
          }),
        });
        client.subscribe(
          { type: 'multiplier' },
          {
            since: starts['type:multiplier'],
            onRound: (r: { round_id: number }) => w.__replayed.push(r.round_id),
          },
        );
      },
      { starts, targets: targets() },
    );
    const replayed = await waitFor('replayed', async () => {
      const r = await page.evaluate(() => (window as unknown as { __replayed: number[] }).__replayed);
      return r.length === 3 ? r : undefined;
    });
    expect(replayed.sort()).toEqual([sent[0], sent[2], sent[3]].map((r) => r?.round_id).sort());
  });

  it('resumes from the position a lifecycle envelope carried, after a drop right after it: every round once, in order', async () => {
    const first = await openEnvelopeSession('before', 'type=multiplier&envelope=1&lifecycle=1');
    await waitFor('live', async () =>
      (await said(first)).some((m) => m.type === 'recovered') ? true : undefined,
    );
    const given = [next('crash'), next('slot')];
    const coming = next('crash');
    await append(given);
    await waitFor('two rounds', async () => {
      const ids = roundIds(await said(first));
      return given.every((g) => ids.includes(g.round_id)) ? true : undefined;
    });
    await append(lifecycleOf(coming));
    const cut = await waitFor('the coming round’s lifecycle', async () => {
      const l = (await said(first)).filter(
        (m) => m.type === 'lifecycle' && (m.data as { round_id: number }).round_id === coming.round_id,
      );
      return l.length === 2 ? l[1] : undefined;
    });
    // The session drops right after the lifecycle envelopes.
    await page.evaluate(
      (id) => (window as unknown as { __wt: Record<string, { close(): void }> }).__wt[id]?.close(),
      first,
    );
    const lastRound = (await said(first)).filter((m) => m.type === 'round').at(-1);
    // Its position is the subscription's: that of the last round delivered before it.
    expect(cut.position).toBe(lastRound?.position);

    const missed = [coming, next('double'), next('slot'), next('crash')];
    await append(missed);
    const second = await openEnvelopeSession(
      'after',
      `type=multiplier&envelope=1&lifecycle=1&since=${encodeURIComponent(cut.position as string)}`,
    );
    const recovered = await waitFor('resumed', async () =>
      (await said(second)).find((m) => m.type === 'recovered'),
    );
    const live = next('slot');
    await append([live]);
    await waitFor('live after the resume', async () =>
      roundIds(await said(second)).includes(live.round_id) ? true : undefined,
    );
    expect(recovered.data).toEqual({ recovered: true, since: cut.position, replayed: 3 });
    const rounds = (await said(second)).filter((m) => m.type === 'round');
    expect(rounds.filter((m) => m.initial)).toEqual([]);
    for (const g of ['crash', 'slot'])
      expect(
        rounds
          .filter((m) => (m.data as { game_slug: string }).game_slug === g)
          .map((m) => (m.data as { round_id: number }).round_id),
      ).toEqual([...missed, live].filter((r) => r.game_slug === g).map((r) => r.round_id));
    expect(rounds).toHaveLength(4);
  });

  it('the stream client resumes after its session drops right after a lifecycle envelope: every round once, in order', async () => {
    // Every session the page opens, so that the test can end one as a lost connection would.
    await page.evaluate(() => {
      const w = window as unknown as { __sessions: WebTransport[]; WebTransport: typeof WebTransport };
      if (w.__sessions) return;
      w.__sessions = [];
      const Native = w.WebTransport;
      w.WebTransport = class extends Native {
        constructor(url: string | URL, options?: WebTransportOptions) {
          super(url, options);
          w.__sessions.push(this);
        }
      };
    });
    await openPageClient(page, 'drop', 'webtransport', targets(), [{ type: 'multiplier' }], {
      lifecycle: true,
    });
    await waitFor('live', async () =>
      (await pageRecord(page, 'drop')).recovered.length === 1 ? true : undefined,
    );
    const start = roundsOf((await pageRecord(page, 'drop')).starts['type:multiplier'] as string);
    const given = [next('crash'), next('slot')];
    await append(given);
    const coming = next('crash');
    await append(lifecycleOf(coming));
    await waitFor('the lifecycle messages', async () =>
      (await pageRecord(page, 'drop')).phases.includes(`betting-closed ${coming.round_id}`)
        ? true
        : undefined,
    );
    await page.evaluate(() =>
      (window as unknown as { __sessions: WebTransport[] }).__sessions.at(-1)?.close(),
    );
    const missed = [coming, next('slot'), next('crash'), next('slot')];
    await append(missed);
    const rec = await waitFor('resumed, with every round', async () => {
      const r = await pageRecord(page, 'drop');
      return r.recovered.length >= 2 && r.rounds.slot?.includes(missed[3]?.round_id as number)
        ? r
        : undefined;
    });
    const sent = [...given, ...missed];
    for (const g of ['crash', 'slot'])
      expect(rec.rounds[g]).toEqual(
        sent.filter((r) => r.game_slug === g && r.round_id > (start.get(g) ?? 0)).map((r) => r.round_id),
      );
    expect(rec.recovered[1]).toMatchObject({ recovered: true });
    expect(rec.errors).toEqual([]);
    expect(rec.states.some((s) => s.startsWith('reconnecting'))).toBe(true);
  });

  it.each([
    ['a malformed position', 'game=crash&since=nonsense'],
    ['a position of other games', 'game=crash&since=t%3D1%3Bdouble%3D2000000000001'],
    ['lifecycle without envelopes', 'game=crash&lifecycle=1'],
  ])('refuses a session with %s before it opens', async (_case, query) => {
    const outcome = await page.evaluate(
      async ({ url, hashUrl }) => {
        const cert = (await (await fetch(hashUrl)).json()) as { hash: string };
        const value = Uint8Array.from(atob(cert.hash), (c) => c.charCodeAt(0));
        const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
        try {
          await wt.ready;
          wt.close();
          return 'open';
        } catch {
          return 'refused';
        }
      },
      { url: `https://127.0.0.1:${quicPort}/wt?${query}`, hashUrl: `http://127.0.0.1:${httpPort}/cert-hash` },
    );
    expect(outcome).toBe('refused');
    const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(text).toMatch(/edge_wt_session_requests_total\{status="400"[^}]*\} [1-9]/);
  });

  it('refuses an unknown game and subscriptions past the limit on one session, the others go on', async () => {
    await openPageClient(page, 'bad', 'webtransport', targets(), [
      { game: 'roulette' },
      { game: 'crash' },
      { game: 'double' },
      { game: 'slot' },
      { game: 'wall-street' },
      { type: 'multiplier' },
      { type: 'color' },
      { type: 'slots' },
      { type: 'trending' },
      { all: true },
    ]);
    const rec = await waitFor('refusals', async () => {
      const r = await pageRecord(page, 'bad');
      return r.errors.length === 2 ? r : undefined;
    });
    expect(rec.errors.map((e) => [e.status, e.error])).toEqual([
      [404, 'Game not found'],
      [429, 'Too many subscriptions on this connection (limit 8)'],
    ]);
  });
});
