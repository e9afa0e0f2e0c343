/**
 * Reads of the rounds read models (lib/db/migrations/001_rounds_read_models.sql) for the
 * unary RPCs ListGames and GetHistory, through the queries the REST API uses too
 * (lib/db/rounds-read.ts); rows become messages here. Connection failures propagate
 * (errors.ts turns them into UNAVAILABLE).
 */
import type { Sql } from '../../../../lib/db/pool.ts';
import { readGameList, readHistory } from '../../../../lib/db/rounds-read.ts';
import type { FanOutHub } from '../../../../lib/stream/hub.ts';
import { GAMES } from '../../../../rules/games/catalog.ts';
import type { HistoryTarget } from './input.ts';
import type { GameMsg, RoundMsg } from './proto.ts';

/** The game list from the `games` table, by id. */
export async function listGamesFromDb(sql: Sql): Promise<GameMsg[]> {
  return (await readGameList(sql)).map((g) => ({
    id: g.id,
    slug: g.slug,
    name: g.name,
    type: g.type,
    ...(g.last_round === null ? {} : { last_round: g.last_round }),
    ...(g.last_update === null ? {} : { last_update: g.last_update }),
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
 * history by type carry the requested type in `game_type` (docs/contract.md, as REST history by type).
 */
export async function historyFromDb(sql: Sql, target: HistoryTarget, limit: number): Promise<RoundMsg[]> {
  const ids = target.kind === 'game' ? [target.game.id] : target.games.map((g) => g.id);
  const asType = target.kind === 'type' ? target.type : undefined;
  return (await readHistory(sql, ids, limit)).map(({ value: _value, ...r }) => ({
    ...r,
    game_type: asType ?? r.game_type,
  }));
}
