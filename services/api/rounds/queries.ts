/**
 * Reads of the rounds read models (lib/db/migrations/001_rounds_read_models.sql), written
 * by the projector, through the queries the edge's gRPC service uses too
 * (lib/db/rounds-read.ts); rows are turned into the public REST shapes here. Connection
 * failures propagate (the API's error handler turns them into 503).
 */
import type { Sql } from '../../../lib/db/pool.ts';
import { type RoundRow, readGameList, readHistory } from '../../../lib/db/rounds-read.ts';
import type { GameInfo, GameType } from '../../../rules/games/catalog.ts';
import type { RestRound, StreamRound } from '../../../rules/rounds/round.ts';

/** A row of GET /api/games (docs/contract.md "Games"). */
export interface GameRow {
  slug: string;
  name: string;
  type: string;
  last_round: number | null;
  /** ISO 8601 in UTC, or null before the first round. */
  last_update: string | null;
}

/** A history row: the REST form plus `round_id` (docs/architecture.md). */
export type HistoryRow = RestRound & { round_id: number };

/** GET /api/latest/:game: the REST form and the stream form together (docs/architecture.md). */
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

/** A history row of `r`; by type, `game_type` is the requested type (docs/architecture.md). */
export const toHistoryRow = (r: RoundRow, asType?: GameType): HistoryRow => ({
  round_id: r.round_id,
  game_slug: r.game_slug,
  game_type: asType ?? r.game_type,
  finished_at: r.finished_at,
  value: r.value,
});

/** The GET /api/latest/:game body of `r`. */
export const toLatestRound = (r: RoundRow): LatestRound => ({
  ...toHistoryRow(r),
  game_id: r.game_id,
  extras: r.extras,
  timestamp: r.timestamp,
});

/** Queries bound to `sql` (whose search_path is the read-model schema). */
export function createRoundsQueries(sql: Sql): RoundsQueries {
  return {
    async listGames() {
      return (await readGameList(sql)).map(({ id: _id, ...g }) => g);
    },

    async latest(game) {
      const [r] = await readHistory(sql, [game.id], 1);
      return r ? toLatestRound(r) : undefined;
    },

    async history(game, limit) {
      return (await readHistory(sql, [game.id], limit)).map((r) => toHistoryRow(r));
    },

    async historyByType(type, games, limit) {
      const rows = await readHistory(
        sql,
        games.map((g) => g.id),
        limit,
      );
      return rows.map((r) => toHistoryRow(r, type));
    },
  };
}
