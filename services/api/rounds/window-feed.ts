/**
 * Keeps a RoundsWindow equal to the newest rows of the read model: it loads each game's newest rows
 * from Postgres, then fetches what the projector commits after them. The projector's write
 * statement notifies channel `rounds_written` (payload: its schema) when it inserted rows,
 * delivered by Postgres only once that statement has committed; each notification, and a poll
 * every `pollMs` for a notification lost while the listening connection was away, runs one query
 * for the rows appended since each game's cursor (lib/db/rounds-read.ts readAppendedSince). So the
 * window holds only committed rows, in the read model's order, and a request never queries Postgres.
 *
 * The cursor is the commit order (the rows' log append time), not the window's head: a row whose
 * `finished_at` lies in the future (a record an older producer appended) sorts first for as long
 * as it does in Postgres, and every row committed after it still reaches the window; so does a row
 * finished before the head (any finish-time order). docs/decisions/log-and-topics/0009-admission-of-a-rounds-record.md.
 *
 * Cold until the first load succeeds (requests go to Postgres meanwhile); after that it stays warm
 * while its refreshes succeed, and turns cold when none has succeeded for `staleMs` (a database
 * gone for longer than that: requests go to Postgres again and get its 503). A refresh that returns
 * a whole window's worth of rows for a game reloads that game.
 */
import type { Sql } from '../../../lib/db/pool.ts';
import {
  ROUNDS_WRITTEN_CHANNEL,
  readAppendedSince,
  readAppendHeads,
  readHistory,
} from '../../../lib/db/rounds-read.ts';
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

  /** Newest append time read per game id (Unix ms; null: none yet). */
  const cursors = new Map<number, number | null>();

  /** Loads games `ids` anew: the cursor is read first, so a row committed during the load comes again. */
  const reload = async (ids: readonly number[]) => {
    const heads = await readAppendHeads(o.sql, ids);
    const perGame = await Promise.all(ids.map((id) => readHistory(o.sql, [id], capacity)));
    ids.forEach((id, i) => {
      o.window.replace(id, perGame[i] ?? []);
      cursors.set(id, heads.get(id) ?? null);
    });
  };

  const load = async () => {
    await reload(GAMES.map((g) => g.id));
    loaded = true;
  };

  const fetchNewer = async () => {
    const rows = await readAppendedSince(
      o.sql,
      GAMES.map((g) => ({ gameId: g.id, appendedAt: cursors.get(g.id) ?? null })),
      capacity,
    );
    const full: number[] = [];
    for (const g of GAMES) {
      const mine = rows.filter((r) => r.game_id === g.id);
      if (mine.length >= capacity) {
        full.push(g.id);
        continue;
      }
      if (mine.length === 0) continue;
      o.window.add(g.id, mine);
      const newest = mine.reduce((m, r) => Math.max(m, r.timestamp), cursors.get(g.id) ?? 0);
      cursors.set(g.id, newest);
    }
    if (full.length > 0) await reload(full);
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
