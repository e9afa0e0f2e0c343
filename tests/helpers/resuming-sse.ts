/**
 * An SSE client for the drills that behaves like a browser's EventSource behind a load balancer:
 * when its stream ends or fails it reconnects, to the next edge of its list, sending the last
 * event id it received as `Last-Event-ID`. It records every round it is given per game, so a
 * drill can check that each round arrived exactly once and in order.
 *
 * Hand-written on node:http rather than the `eventsource` package because the drills need
 * failover between several origins and the raw event names (`initial` vs `message`).
 */
import { type ClientRequest, get } from 'node:http';
import type { GameSlug } from '../../lib/games.ts';

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
  /** Cuts the current stream as a network failure would; the client reconnects and resumes. */
  drop(): void;
  /** Stops reconnecting and closes the stream. */
  close(): void;
}

/** The per-game positions of an event id `t=<ms>;<slug>=<round id>…` (services/edge/transports/sse/event-id.ts). */
export function positionsOf(id: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pair of id.split(';').slice(1)) {
    const [slug, rid] = pair.split('=');
    if (slug && rid) out.set(slug, Number(rid));
  }
  return out;
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
  let next = first;
  let closed = false;
  let req: ClientRequest | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });

  const onBlock = (block: string) => {
    let event: string | undefined;
    let id: string | undefined;
    let data: string | undefined;
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue; // comments (heartbeats) and blank lines
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (name === 'event') event = value;
      else if (name === 'id') id = value;
      else if (name === 'data') data = value;
    }
    if (event === undefined) return;
    if (id !== undefined) lastId = id;
    if (event === 'initial') {
      if (connects === 1 && start.size === 0 && id) for (const [g, r] of positionsOf(id)) start.set(g, r);
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
    req = undefined;
    if (!closed) setTimeout(connect, retryMs);
  };

  function connect(): void {
    if (closed) return;
    const port = ports[next % ports.length] as number;
    next++;
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      retry();
    };
    req = get({ host: '127.0.0.1', port, path, headers }, (res) => {
      if (res.statusCode !== 200) {
        failedAttempts++;
        res.resume();
        res.on('end', done);
        res.on('error', done);
        return;
      }
      connects++;
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        for (let at = pending.indexOf('\n\n'); at >= 0; at = pending.indexOf('\n\n')) {
          onBlock(pending.slice(0, at));
          pending = pending.slice(at + 2);
        }
      });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('error', () => {
      failedAttempts++;
      done();
    });
  }

  connect();
  return {
    ready,
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
      req?.destroy();
    },
    close() {
      closed = true;
      req?.destroy();
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
