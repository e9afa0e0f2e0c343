/**
 * Keeps a RoundsWindow equal to the newest rows of the read model (issue 14 item 6): it loads each
 * game's newest rows from Postgres, then fetches what the projector commits after them. The
 * projector's write statement notifies channel `rounds_written` (payload: its schema) when it
 * inserted rows, delivered by Postgres only once that statement has committed; each notification,
 * and a poll every `pollMs` for a notification lost while the listening connection was away, runs
 * one query for the rows after each game's head (lib/db/rounds-read.ts readNewer). So the window
 * holds only committed rows, in the read model's order, and a request never queries Postgres.
 *
 * Cold until the first load succeeds (requests go to Postgres meanwhile); after that it stays warm
 * while its refreshes succeed, and turns cold when none has succeeded for `staleMs` (a database
 * gone for longer than that: requests go to Postgres again and get its 503).
 *
 * Assumes what the projector guarantees per game: a row committed later never sorts before the
 * head already held (one engine per game, finish times increasing; a replayed round is not
 * inserted again). A refresh that returns a whole window's worth of rows for a game replaces it.
 */
import type { Sql } from '../../../lib/db/pool.ts';
import { ROUNDS_WRITTEN_CHANNEL, readHistory, readNewer } from '../../../lib/db/rounds-read.ts';
import type { Logger } from '../../../lib/logger.ts';
import { GAMES } from '../../../rules/games/catalog.ts';
import { type RoundsWindow, WINDOW_CAPACITY } from './window.ts';

export interface WindowFeedOptions {
  readonly window: RoundsWindow;
  /** Queries (the API's self-healing pool). */
  readonly sql: Sql;
  /** A pool for LISTEN (postgres.js keeps one dedicated connection and reconnects it). */
  readonly listenSql: Sql;
  /** The read-model schema: notifications of other schemas are ignored. */
  readonly schema: string;
  readonly logger: Logger;
  /** Poll period, ms (default 1000). */
  readonly pollMs?: number;
  /** Longest time without a successful refresh before the window turns cold, ms (default 30 s). */
  readonly staleMs?: number;
}

export interface WindowFeed {
  /** Resolves after the first load (or its failure: then the poll keeps trying). */
  readonly started: Promise<void>;
  stop(): Promise<void>;
}

/** Starts the feed. Never throws: failures are logged and retried by the poll. */
export function startWindowFeed(o: WindowFeedOptions): WindowFeed {
  const log = o.logger.child({ component: 'rounds-window' });
  const pollMs = o.pollMs ?? 1000;
  const staleMs = o.staleMs ?? 30_000;
  const capacity = WINDOW_CAPACITY;
  let loaded = false;
  let lastOk = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const load = async () => {
    const perGame = await Promise.all(GAMES.map((g) => readHistory(o.sql, [g.id], capacity)));
    GAMES.forEach((g, i) => {
      o.window.replace(g.id, perGame[i] ?? []);
    });
    loaded = true;
  };

  const fetchNewer = async () => {
    const heads = GAMES.map((g) => {
      const h = o.window.head(g.id);
      return { gameId: g.id, ...(h ? { head: { finishedAt: h.finished_at, roundId: h.round_id } } : {}) };
    });
    const rows = await readNewer(o.sql, heads, capacity);
    for (const g of GAMES) {
      const mine = rows.filter((r) => r.game_id === g.id);
      if (mine.length >= capacity) o.window.replace(g.id, mine);
      else if (mine.length > 0) o.window.add(g.id, mine);
    }
  };

  /** One refresh at a time; a request for one while it runs makes it run once more after. */
  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await (loaded ? fetchNewer() : load());
          lastOk = Date.now();
          o.window.warm = true;
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'refresh of the rounds window failed');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => {
    if (loaded && Date.now() - lastOk > staleMs && o.window.warm) {
      o.window.warm = false;
      log.warn({ staleMs }, 'rounds window cold: no refresh succeeded in time; reading Postgres');
    }
    void refresh();
  }, pollMs);
  timer.unref?.();

  const listening = o.listenSql
    .listen(
      ROUNDS_WRITTEN_CHANNEL,
      (payload) => {
        if (payload === o.schema) void refresh();
      },
      // Also after a reconnect: what was committed meanwhile is fetched at once.
      () => void refresh(),
    )
    .catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'LISTEN failed; the window follows the poll only');
      return undefined;
    });

  return {
    started: refresh(),
    async stop() {
      stopped = true;
      clearInterval(timer);
      const l = await listening;
      await l?.unlisten().catch(() => {});
      await running;
    },
  };
}
