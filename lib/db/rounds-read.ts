/**
 * Reads of the rounds read models (lib/db/migrations/001_rounds_read_models.sql), shared by
 * every service that answers queries from them: the REST API and the edge's gRPC ListGames and
 * GetHistory. Only the projector writes these tables (docs/architecture.md); readers come through here.
 * Postgres returns `bigint` as text and `timestamptz` as Date; rows leave as plain JSON values.
 * Connection failures propagate to the caller (503 on REST, UNAVAILABLE on gRPC).
 */
import type { Sql } from './pool.ts';

/**
 * The channel the rounds projection notifies (pg_notify, in its write statement, so only once
 * committed) when it inserted rows; the payload is the read-model schema. Readers that keep
 * rows in memory (the API's rounds window) fetch what is new on it.
 */
export const ROUNDS_WRITTEN_CHANNEL = 'rounds_written';

/** A row of the game list; `last_round`/`last_update` are null before a game's first round. */
export interface GameListRow {
  readonly id: number;
  readonly slug: string;
  readonly name: string;
  readonly type: string;
  readonly last_round: number | null;
  /** ISO 8601 in UTC. */
  readonly last_update: string | null;
}

/** A round row with every public field: REST `value` and the stream form's `extras`/`timestamp`. */
export interface RoundRow {
  readonly round_id: number;
  readonly game_id: number;
  readonly game_slug: string;
  /** The game's primary type as stored; history by type reports the requested one instead. */
  readonly game_type: string;
  /** ISO 8601 in UTC. */
  readonly finished_at: string;
  readonly value: string;
  /** JSON text of the per-game data. */
  readonly extras: string;
  /** Log append time, Unix ms. */
  readonly timestamp: number;
}

interface DbGame {
  id: number;
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

/** The game list in id order. */
export async function readGameList(sql: Sql): Promise<GameListRow[]> {
  const rows = await sql<
    DbGame[]
  >`select id, slug, name, type, last_round, last_update from games order by id`;
  return rows.map((g) => ({
    id: g.id,
    slug: g.slug,
    name: g.name,
    type: g.type,
    last_round: g.last_round === null ? null : Number(g.last_round),
    last_update: g.last_update?.toISOString() ?? null,
  }));
}

/**
 * Up to `limit` rounds of the games `gameIds`, newest first (finished_at, then round_id,
 * descending). For several games the newest `limit` of each comes through the
 * (game_id, finished_at, round_id) index and is then merged, so the cost stays
 * O(games × limit) however long the history grows.
 */
export async function readHistory(sql: Sql, gameIds: readonly number[], limit: number): Promise<RoundRow[]> {
  const rows =
    gameIds.length === 1
      ? await sql<DbRound[]>`
          select ${roundCols(sql)} from rounds where game_id = ${gameIds[0] as number}
          order by finished_at desc, round_id desc limit ${limit}`
      : await sql<DbRound[]>`
          select r.* from unnest(${sql.array([...gameIds])}::int[]) as g(id)
          cross join lateral (
            select ${roundCols(sql)} from rounds where game_id = g.id
            order by finished_at desc, round_id desc limit ${limit}
          ) r
          order by r.finished_at desc, r.round_id desc limit ${limit}`;
  return rows.map(toRoundRow);
}

/** Where a reader's copy of a game's rows ends in commit order: the newest append time it has read. */
export interface AppendCursor {
  readonly gameId: number;
  /** Unix ms of the newest `appended_at` read; null when none was read yet. */
  readonly appendedAt: number | null;
}

/**
 * The newest append time of each game's rows (Unix ms; null for a game with none), through the
 * (game_id, appended_at) index. Taken before a load, it is where the rows committed after it start.
 */
export async function readAppendHeads(
  sql: Sql,
  gameIds: readonly number[],
): Promise<Map<number, number | null>> {
  if (gameIds.length === 0) return new Map();
  // No array parameter: this is the first query of a fresh pool (the window's load), and postgres.js
  // can send an array before it has fetched the array types ("malformed array literal").
  const rows = await sql<{ id: number; at: Date | null }[]>`
    select g.id, (select max(r.appended_at) from rounds r where r.game_id = g.id) as at
    from games g where g.id in ${sql([...gameIds])}`;
  return new Map(rows.map((r) => [r.id, r.at === null ? null : r.at.getTime()]));
}

/**
 * The rows of each game appended at or after its cursor (oldest first, at most `limit` per game),
 * whatever their finish times: the projector commits a game's rows in its log's order, and the
 * topic stamps each record with the broker's append time, so this follows commits where a cursor on
 * (finished_at, round_id) would stop at a row finished in the future. Rows at the cursor's very
 * millisecond come again (the caller drops those it holds). A game whose answer holds `limit` rows
 * may have more: the caller reloads it.
 */
export async function readAppendedSince(
  sql: Sql,
  cursors: readonly AppendCursor[],
  limit: number,
): Promise<RoundRow[]> {
  const rows = await sql<DbRound[]>`
    select r.* from unnest(
      ${sql.array(cursors.map((c) => c.gameId))}::int[],
      ${sql.array(cursors.map((c) => (c.appendedAt === null ? null : new Date(c.appendedAt).toISOString())) as string[])}::timestamptz[]
    ) as c(id, at)
    cross join lateral (
      select ${roundCols(sql)} from rounds
      where game_id = c.id and (c.at is null or appended_at >= c.at)
      order by appended_at limit ${limit}
    ) r`;
  return rows.map(toRoundRow);
}

const roundCols = (sql: Sql) =>
  sql`round_id, game_id, game_slug, game_type, finished_at, value, extras, appended_at`;

function toRoundRow(r: DbRound): RoundRow {
  return {
    round_id: Number(r.round_id),
    game_id: r.game_id,
    game_slug: r.game_slug,
    game_type: r.game_type,
    finished_at: r.finished_at.toISOString(),
    value: r.value,
    extras: JSON.stringify(r.extras),
    timestamp: r.appended_at.getTime(),
  };
}
