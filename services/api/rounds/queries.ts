/**
 * Reads of the rounds read models (projections/migrations/001_rounds_read_models.sql), written
 * by the projector. Postgres returns `bigint` as text and `timestamptz` as Date; rows are turned
 * into the public shapes here. Connection failures propagate (the API's error handler turns
 * them into 503).
 */
import type { Sql } from '../../../lib/db.ts';
import type { GameInfo, GameType } from '../../../lib/games.ts';
import type { RestRound, StreamRound } from '../../../lib/rounds.ts';

/** A row of GET /api/games (seed 000, "Game"). */
export interface GameRow {
  slug: string;
  name: string;
  type: string;
  last_round: number | null;
  /** ISO 8601 in UTC, or null before the first round. */
  last_update: string | null;
}

/** A history row: the REST form plus `round_id` (DESIGN.md). */
export type HistoryRow = RestRound & { round_id: number };

/** GET /api/latest/:game: the REST form and the stream form together (DESIGN.md). */
export type LatestRound = RestRound & StreamRound;

export interface RoundsQueries {
  listGames(): Promise<GameRow[]>;
  /** The newest round of `game`, or undefined when it has none yet. */
  latest(game: GameInfo): Promise<LatestRound | undefined>;
  /** Up to `limit` rounds of `game`, newest first (finished_at, then round_id, descending). */
  history(game: GameInfo, limit: number): Promise<HistoryRow[]>;
  /** Up to `limit` rounds of the games of `type`, newest first, each with `game_type` = `type`. */
  historyByType(type: GameType, games: readonly GameInfo[], limit: number): Promise<HistoryRow[]>;
}

interface DbGame {
  slug: string;
  name: string;
  type: string;
  last_round: string | null;
  last_update: Date | null;
}

interface DbRound {
  round_id: string;
  game_id: number;
  game_slug: string;
  game_type: string;
  finished_at: Date;
  value: string;
  extras: unknown;
  appended_at: Date;
}

type DbHistory = Pick<DbRound, 'round_id' | 'game_slug' | 'game_type' | 'finished_at' | 'value'>;

const toHistory = (r: DbHistory, asType?: GameType): HistoryRow => ({
  round_id: Number(r.round_id),
  game_slug: r.game_slug,
  game_type: asType ?? r.game_type,
  finished_at: r.finished_at.toISOString(),
  value: r.value,
});

/** Queries bound to `sql` (whose search_path is the read-model schema). */
export function createRoundsQueries(sql: Sql): RoundsQueries {
  return {
    async listGames() {
      const rows = await sql<DbGame[]>`
        select slug, name, type, last_round, last_update from games order by id`;
      return rows.map((g) => ({
        slug: g.slug,
        name: g.name,
        type: g.type,
        last_round: g.last_round === null ? null : Number(g.last_round),
        last_update: g.last_update?.toISOString() ?? null,
      }));
    },

    async latest(game) {
      const [r] = await sql<DbRound[]>`
        select round_id, game_id, game_slug, game_type, finished_at, value, extras, appended_at
        from rounds where game_id = ${game.id}
        order by finished_at desc, round_id desc limit 1`;
      if (!r) return undefined;
      return {
        ...toHistory(r),
        game_id: r.game_id,
        extras: JSON.stringify(r.extras),
        timestamp: r.appended_at.getTime(),
      };
    },

    async history(game, limit) {
      const rows = await sql<DbHistory[]>`
        select round_id, game_slug, game_type, finished_at, value
        from rounds where game_id = ${game.id}
        order by finished_at desc, round_id desc limit ${limit}`;
      return rows.map((r) => toHistory(r));
    },

    async historyByType(type, games, limit) {
      // The newest `limit` of each game through the (game_id, finished_at, round_id) index, then
      // merged: cost stays O(games × limit) however long the history grows.
      const ids = games.map((g) => g.id);
      const rows = await sql<DbHistory[]>`
        select r.round_id, r.game_slug, r.game_type, r.finished_at, r.value
        from unnest(${sql.array(ids)}::int[]) as g(id)
        cross join lateral (
          select round_id, game_slug, game_type, finished_at, value from rounds
          where game_id = g.id order by finished_at desc, round_id desc limit ${limit}
        ) r
        order by r.finished_at desc, r.round_id desc limit ${limit}`;
      return rows.map((r) => toHistory(r, type));
    },
  };
}
