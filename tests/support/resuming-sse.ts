/**
 * An SSE client for the drills that behaves like a browser's EventSource behind a load balancer:
 * when its stream ends or fails it reconnects, to the next edge of its list, sending the last
 * event id it received as `Last-Event-ID`. It records every round it is given per game, so a
 * drill can check that each round arrived exactly once and in order.
 *
 * Each stream is the edge tests' own client (tests/support/sse-client.ts) rather
 * than the `eventsource` package, because the drills need failover between several origins and
 * the raw event names (`initial` vs `message`).
 */
import { type GameSlug, gamesOfType } from '../../rules/games/catalog.ts';
import { parseEventId } from '../../services/edge/transports/sse/event-id.ts';
import { openSse, type SseClient, type SseEvent } from './sse-client.ts';

/** The subscriptions the drills open: one per game and the two types with more than one game. */
export const SSE_SUBSCRIPTIONS: readonly { readonly path: string; readonly games: readonly string[] }[] = [
  ...['crash', 'double', 'slot', 'wall-street'].map((g) => ({ path: `/sse/${g}`, games: [g] })),
  { path: '/sse/type/multiplier', games: gamesOfType('multiplier').map((g) => g.slug) },
  { path: '/sse/type/color', games: gamesOfType('color').map((g) => g.slug) },
];

/** What a drill checks at the end. */
export interface SseTally {
  /** Round ids of `message` events per game, in arrival order. */
  readonly rounds: ReadonlyMap<string, readonly number[]>;
  /** Per game, the last round the first stream said was already given (from the first event's id). */
  readonly start: ReadonlyMap<string, number>;
  /** Streams opened (200 answers); 1 means it never had to reconnect. */
  readonly connects: number;
  /** `initial` events after the first stream: a resume that was not honoured. */
  readonly lateInitials: number;
  /** Connection attempts that failed (refused, non-200); expected while an edge restarts. */
  readonly failedAttempts: number;
}

export interface ResumingSse extends SseTally {
  /** Resolves once the first stream has delivered its first event. */
  readonly ready: Promise<void>;
  /** The name of the last event received (`message`, `round-opened`…), undefined before any. */
  readonly lastEvent: string | undefined;
  /** Cuts the current stream as a network failure would; the client reconnects and resumes. */
  drop(): void;
  /** Stops reconnecting and closes the stream. */
  close(): void;
}

/**
 * Opens `path` (e.g. `/sse/crash`) on 127.0.0.1:`ports[first]`, and after every end or failure
 * reconnects to the next port of `ports` (round robin) after `retryMs` ms.
 */
export function resumingSse(ports: readonly number[], path: string, first = 0, retryMs = 100): ResumingSse {
  const rounds = new Map<string, number[]>();
  const start = new Map<string, number>();
  let connects = 0;
  let lateInitials = 0;
  let failedAttempts = 0;
  let lastId: string | undefined;
  let lastEvent: string | undefined;
  let next = first;
  let closed = false;
  let current: SseClient | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });

  const onEvent = ({ event, id, data }: SseEvent) => {
    if (event === undefined) return; // comments (heartbeats)
    lastEvent = event;
    if (id !== undefined) lastId = id;
    if (event === 'initial') {
      const parsed = connects === 1 && start.size === 0 && id ? parseEventId({ kind: 'all' }, id) : undefined;
      if (parsed?.ok) for (const [g, r] of parsed.position.last) start.set(g, r);
      else lateInitials++;
    } else if (event === 'message' && data) {
      const round = JSON.parse(data) as { round_id: number; game_slug: GameSlug };
      const list = rounds.get(round.game_slug) ?? [];
      list.push(round.round_id);
      rounds.set(round.game_slug, list);
    }
    markReady();
  };

  const retry = () => {
    current = undefined;
    if (!closed) setTimeout(connect, retryMs);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const port = ports[next % ports.length] as number;
    next++;
    let client: SseClient;
    try {
      client = await openSse(port, path, lastId === undefined ? {} : { 'Last-Event-ID': lastId });
    } catch {
      failedAttempts++;
      return retry();
    }
    if (closed) return client.close();
    if (client.res.statusCode !== 200) {
      failedAttempts++;
      client.close();
      return retry();
    }
    connects++;
    current = client;
    // openSse parses the blocks into client.events; take each new one as it arrives.
    let taken = 0;
    const take = () => {
      while (taken < client.events.length) onEvent(client.events[taken++] as SseEvent);
    };
    let over = false;
    const end = () => {
      if (over) return;
      over = true;
      take();
      retry();
    };
    client.res.on('data', take);
    for (const e of ['end', 'close', 'error']) client.res.on(e, end);
    take();
    if (client.ended) end();
  }

  void connect();
  return {
    ready,
    get lastEvent() {
      return lastEvent;
    },
    get rounds() {
      return rounds;
    },
    start,
    get connects() {
      return connects;
    },
    get lateInitials() {
      return lateInitials;
    },
    get failedAttempts() {
      return failedAttempts;
    },
    drop() {
      current?.close();
    },
    close() {
      closed = true;
      current?.close();
    },
  };
}

/**
 * Compares what `client` received with `log` (round ids per game in log order) for the games
 * `games`: after its start position, every round exactly once and in order.
 * @returns a list of problems, empty when it got everything.
 */
export function missedOrRepeated(
  client: SseTally,
  log: ReadonlyMap<string, readonly number[]>,
  games: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const g of games) {
    const from = client.start.get(g);
    if (from === undefined) {
      problems.push(`${g}: no start position in the first event id`);
      continue;
    }
    const want = (log.get(g) ?? []).filter((r) => r > from);
    const got = client.rounds.get(g) ?? [];
    if (want.length === got.length && want.every((r, i) => got[i] === r)) continue;
    const have = new Set(got);
    const missing = want.filter((r) => !have.has(r));
    const repeated = got.filter((r, i) => got.indexOf(r) !== i);
    problems.push(
      `${g}: want ${want.length} rounds after ${from}, got ${got.length}; missing ${missing.slice(0, 5).join(',') || 'none'}${missing.length > 5 ? '…' : ''}; repeated ${repeated.slice(0, 5).join(',') || 'none'}`,
    );
  }
  return problems;
}

/** missedOrRepeated of every client in `clients`, each problem prefixed with `client <index>:`. */
export function clientProblems(
  clients: readonly { readonly c: SseTally; readonly games: readonly string[] }[],
  log: ReadonlyMap<string, readonly number[]>,
): string[] {
  return clients.flatMap(({ c, games }, n) =>
    missedOrRepeated(c, log, games).map((p) => `client ${n}: ${p}`),
  );
}
