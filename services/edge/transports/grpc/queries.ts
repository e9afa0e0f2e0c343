/**
 * Reads of the rounds read models (projections/migrations/001_rounds_read_models.sql) for the
 * unary RPCs ListGames and GetHistory. Only projectors write them (DESIGN.md); the edge reads.
 * Postgres returns `bigint` as text and `timestamptz` as Date; rows become messages here.
 * Connection failures propagate (errors.ts turns them into UNAVAILABLE).
 */
import type { Sql } from '../../../../lib/db.ts';
import { GAMES } from '../../../../lib/games.ts';
import type { FanOutHub } from '../../hub.ts';
import type { HistoryTarget } from './input.ts';
import type { GameMsg, RoundMsg } from './proto.ts';

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
  extras: unknown;
  appended_at: Date;
}

/** The game list from the `games` table, by id. */
export async function listGamesFromDb(sql: Sql): Promise<GameMsg[]> {
  const rows = await sql<DbGame[]>`
    select id, slug, name, type, last_round, last_update from games order by id`;
  return rows.map((g) => ({
    id: g.id,
    slug: g.slug,
    name: g.name,
    type: g.type,
    ...(g.last_round === null ? {} : { last_round: Number(g.last_round) }),
    ...(g.last_update === null ? {} : { last_update: g.last_update.toISOString() }),
  }));
}

/**
 * The game list from the catalogue and the hub's latest round per game, for an edge run without
 * the read-model database: `last_round`/`last_update` are those of the newest round the edge
 * holds (from the log at start), absent for a game with none.
 */
export function listGamesFromHub(hub: FanOutHub): GameMsg[] {
  return GAMES.map((g) => {
    const d = hub.latest({ kind: 'game', slug: g.slug })[0];
    return {
      id: g.id,
      slug: g.slug,
      name: g.name,
      type: g.type,
      ...(d
        ? { last_round: d.round.round_id, last_update: new Date(d.round.finished_at).toISOString() }
        : {}),
    };
  });
}

/**
 * Up to `limit` rounds of the target, newest first (finished_at, then round_id, descending), in
 * the stream form: `extras` as JSON text, `timestamp` the append time in Unix ms. Rows of a
 * history by type carry the requested type in `game_type` (seed 000, as REST history by type).
 */
export async function historyFromDb(sql: Sql, target: HistoryTarget, limit: number): Promise<RoundMsg[]> {
  const cols = sql`round_id, game_id, game_slug, game_type, finished_at, extras, appended_at`;
  const rows =
    target.kind === 'game'
      ? await sql<DbRound[]>`
          select ${cols} from rounds where game_id = ${target.game.id}
          order by finished_at desc, round_id desc limit ${limit}`
      : // The newest `limit` of each game through the (game_id, finished_at, round_id) index,
        // then merged: cost O(games × limit) however long the history grows.
        await sql<DbRound[]>`
          select r.* from unnest(${sql.array(target.games.map((g) => g.id))}::int[]) as g(id)
          cross join lateral (
            select ${cols} from rounds where game_id = g.id
            order by finished_at desc, round_id desc limit ${limit}
          ) r
          order by r.finished_at desc, r.round_id desc limit ${limit}`;
  const asType = target.kind === 'type' ? target.type : undefined;
  return rows.map((r) => ({
    round_id: Number(r.round_id),
    game_id: r.game_id,
    game_slug: r.game_slug,
    game_type: asType ?? r.game_type,
    finished_at: r.finished_at.toISOString(),
    extras: JSON.stringify(r.extras),
    timestamp: r.appended_at.getTime(),
  }));
}
