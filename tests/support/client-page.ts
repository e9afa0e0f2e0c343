/**
 * The stream client (packages/client, as the pages load it: public/vendor/rounds-client.js) in
 * headless Chromium and in Node, with the same recording of what each subscription gives, so a
 * test compares both with the log (not a test file).
 *
 * Browser side: a tiny static server gives a blank page and the bundle; `openPageClient` starts a
 * client in the page over WebSocket, SSE or WebTransport against any edges (cross-origin: the edges
 * answer CORS `*`).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { BUNDLE_PATH } from '../../packages/client/bundle.ts';
import {
  createRoundsClient,
  type RecoveredInfo,
  roundsOf,
  type Selection,
  type ServerError,
  type Transport,
} from '../../packages/client/src/index.ts';

/** What a client recorded: round ids per game, and each subscription's start position. */
export interface ClientRecord {
  readonly rounds: Record<string, number[]>;
  /** Subscription name → the position of its first `recovered` (where it started). */
  readonly starts: Record<string, string>;
  readonly states: string[];
  readonly errors: ServerError[];
  /** Every `recovered` verdict, in order. */
  readonly recovered: RecoveredInfo[];
  /** Lifecycle messages as `<event> <round id>`, in order (with `lifecycle`). */
  readonly phases: string[];
}

/** Options of every subscription of a page client. */
export interface PageSubscribeOptions {
  readonly lifecycle?: boolean;
  readonly since?: string;
}

/** A static server of a blank page and `/rounds-client.js`. */
export async function serveClientBundle(): Promise<{ origin: string; close(): Promise<void> }> {
  const bundle = readFileSync(BUNDLE_PATH);
  const server: Server = createServer((req, res) => {
    if (req.url === '/rounds-client.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>client</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Where a page client connects: base URLs, and the WebSocket / WebTransport address of each. */
export interface PageTargets {
  readonly bases: readonly string[];
  readonly wsUrls?: Record<string, string>;
  readonly wtUrls?: Record<string, string>;
  /** The WebTransport edges' `/cert-hash` (one certificate for all). */
  readonly certHashUrl?: string;
}

/**
 * Loads the bundle into the page as `window.rc` (a module script: vitest would rewrite an
 * `import()` inside a function given to `page.evaluate`).
 */
async function loadBundle(page: Page): Promise<void> {
  if (await page.evaluate(() => 'rc' in window)) return;
  await page.addScriptTag({
    type: 'module',
    content: "import * as rc from '/rounds-client.js'; window.rc = rc;",
  });
  await page.waitForFunction(() => 'rc' in window);
}

/** Starts a client `id` in the page over `kind`, subscribed to `subs`, recording into `window.__clients[id]`. */
export async function openPageClient(
  page: Page,
  id: string,
  kind: 'websocket' | 'sse' | 'webtransport',
  targets: PageTargets,
  subs: readonly Selection[],
  options: PageSubscribeOptions = {},
): Promise<void> {
  await loadBundle(page);
  await page.evaluate(
    ({ id, kind, targets, subs, options }) => {
      // biome-ignore lint/suspicious/noExplicitAny: the bundle's API, untyped in the page.
      const rc = (window as unknown as { rc: any }).rc;
      const transport =
        kind === 'websocket'
          ? rc.websocketTransport({ url: (b: string) => targets.wsUrls?.[b] })
          : kind === 'sse'
            ? rc.sseTransport()
            : rc.webTransport({
                url: (b: string) => targets.wtUrls?.[b],
                certificateHashes: rc.certificateHashesFrom(targets.certHashUrl),
              });
      const client = rc.createRoundsClient({
        baseUrl: targets.bases,
        transport,
        reconnect: { initialMs: 100, maxMs: 1000 },
      });
      const rec = {
        rounds: {} as Record<string, number[]>,
        starts: {} as Record<string, string>,
        states: [] as string[],
        errors: [] as unknown[],
        recovered: [] as unknown[],
        phases: [] as string[],
      };
      client.onState((s: { state: string; reason?: string }) =>
        rec.states.push(s.reason ? `${s.state}: ${s.reason}` : s.state),
      );
      for (const sel of subs) {
        const handle = client.subscribe(sel, {
          ...options,
          onRound: (r: { game_slug: string; round_id: number }) => {
            rec.rounds[r.game_slug] ??= [];
            rec.rounds[r.game_slug]?.push(r.round_id);
          },
          onLifecycle: (m: { event: string; round_id: number }) =>
            rec.phases.push(`${m.event} ${m.round_id}`),
          onRecovered: (info: unknown) => {
            rec.recovered.push(info);
            rec.starts[handle.name] ??= handle.position;
          },
          onError: (e: unknown) => rec.errors.push(e),
        });
      }
      const w = window as unknown as { __clients: Record<string, unknown> };
      w.__clients ??= {};
      w.__clients[id] = { client, rec };
    },
    { id, kind, targets, subs, options },
  );
}

/** What page client `id` has recorded so far. */
export async function pageRecord(page: Page, id: string): Promise<ClientRecord> {
  return await page.evaluate(
    (i) =>
      (window as unknown as { __clients: Record<string, { rec: ClientRecord }> }).__clients[i]
        ?.rec as ClientRecord,
    id,
  );
}

/** The same client in Node over `transport` (gRPC, WebSocket with `ws`, SSE). */
export function nodeClient(
  transport: Transport,
  bases: readonly string[],
  subs: readonly Selection[],
): { readonly record: ClientRecord; close(): void } {
  const client = createRoundsClient({
    baseUrl: bases,
    transport,
    reconnect: { initialMs: 100, maxMs: 1000 },
  });
  const record: ClientRecord = { rounds: {}, starts: {}, states: [], errors: [], recovered: [], phases: [] };
  client.onState((s) => record.states.push(s.state));
  for (const sel of subs) {
    const handle = client.subscribe(sel, {
      onRound: (r) => {
        record.rounds[r.game_slug] ??= [];
        record.rounds[r.game_slug]?.push(r.round_id);
      },
      onRecovered: (info) => {
        record.recovered.push(info);
        record.starts[handle.name] ??= handle.position as string;
      },
      onError: (e) => record.errors.push(e),
    });
  }
  return { record, close: () => client.close() };
}

/**
 * What `record` lacks or repeats against `log` (round ids per game in log order): for each
 * subscription and game, every round after its start position, once and in order.
 * @param games subscription name → its games.
 */
export function recordProblems(
  record: ClientRecord,
  log: ReadonlyMap<string, readonly number[]>,
  games: Readonly<Record<string, readonly string[]>>,
): string[] {
  const problems: string[] = [];
  for (const [sub, list] of Object.entries(games)) {
    const start = record.starts[sub];
    if (!start) {
      problems.push(`${sub}: never started`);
      continue;
    }
    const from = roundsOf(start);
    for (const g of list) {
      const want = (log.get(g) ?? []).filter((r) => r > (from.get(g) ?? 0));
      const got = record.rounds[g] ?? [];
      if (want.length === got.length && want.every((r, i) => got[i] === r)) continue;
      const have = new Set(got);
      const missing = want.filter((r) => !have.has(r));
      const repeated = got.filter((r, i) => got.indexOf(r) !== i);
      problems.push(
        `${sub} ${g}: want ${want.length}, got ${got.length}; missing ${missing.slice(0, 5).join(',') || 'none'}; repeated ${repeated.slice(0, 5).join(',') || 'none'}`,
      );
    }
  }
  return problems;
}
