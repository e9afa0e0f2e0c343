/**
 * The rounds projection as pure code (docs/conventions.md §3 and §9, "given these events, then these rows"):
 * RoundFinished events of the `rounds` topic become rows of `rounds` (history) and updates of
 * `games` (the game list's last_round and last_update, docs/contract.md "Games"). No I/O, no clock: the
 * log append time of each event comes in with it.
 *
 * The SQL that applies these rows (lib/projections/rounds/store.ts) has the same semantics as
 * `applyGameUpdate`: the game list only moves forward (`greatest`), and a round already stored
 * is kept as first written (`on conflict do nothing`), so replaying any prefix of the log again
 * changes nothing.
 */
import { extrasOf, type RoundFinished, roundValue } from '../../../rules/rounds/round.ts';

/** One decoded event with the time the log appended it (Kafka record timestamp, Unix ms). */
export interface ProjectedEvent {
  readonly round: RoundFinished;
  readonly appendedAt: number;
}

/** One row of table `rounds`. Times are Unix ms; `extras` and `proof` are JSON text. */
export interface RoundRow {
  readonly game_id: number;
  readonly round_id: number;
  readonly game_slug: string;
  readonly game_type: string;
  readonly finished_at: number;
  /** The seed's `value`: crash point, double colour, slot multiplier or trend. */
  readonly value: string;
  readonly extras: string;
  readonly proof: string | null;
  readonly appended_at: number;
}

/** What a batch says about one game of the game list: the newest round and finish time seen (Unix ms). */
export interface GameUpdate {
  readonly game_id: number;
  readonly last_round: number;
  readonly last_update: number;
}

/** The rows one batch of events projects to. */
export interface Projection {
  /** One row per distinct (game_id, round_id), in event order; the first occurrence wins. */
  readonly rows: RoundRow[];
  /** One update per game present in the batch, ordered by game_id. */
  readonly games: GameUpdate[];
}

/** Maps one event to its history row. */
export function toRoundRow({ round, appendedAt }: ProjectedEvent): RoundRow {
  return {
    game_id: round.game_id,
    round_id: round.round_id,
    game_slug: round.game_slug,
    game_type: round.game_type,
    finished_at: round.finished_at,
    value: roundValue(round.result),
    extras: JSON.stringify(extrasOf(round.result)),
    proof: round.proof === null ? null : JSON.stringify(round.proof),
    appended_at: appendedAt,
  };
}

/**
 * Projects a batch of events (in log order) to history rows and game-list updates.
 * last_round is the largest round_id of the game in the batch and last_update the latest
 * finished_at, independently: a late, older round never lowers either.
 */
export function projectRounds(events: readonly ProjectedEvent[]): Projection {
  const rows: RoundRow[] = [];
  const seen = new Set<string>();
  const games = new Map<number, GameUpdate>();
  for (const e of events) {
    const key = `${e.round.game_id}:${e.round.round_id}`;
    if (!seen.has(key)) {
      seen.add(key);
      rows.push(toRoundRow(e));
    }
    const cur = games.get(e.round.game_id);
    games.set(e.round.game_id, {
      game_id: e.round.game_id,
      last_round: Math.max(cur?.last_round ?? e.round.round_id, e.round.round_id),
      last_update: Math.max(cur?.last_update ?? e.round.finished_at, e.round.finished_at),
    });
  }
  return { rows, games: [...games.values()].sort((a, b) => a.game_id - b.game_id) };
}

/** The game list's state of one game; null until its first round. Times are Unix ms. */
export interface GameListState {
  readonly last_round: number | null;
  readonly last_update: number | null;
}

/**
 * Applies an update to a game's list state the way the SQL does (`greatest`, which ignores
 * null): each field only moves forward, so re-applying old updates on replay is a no-op.
 */
export function applyGameUpdate(state: GameListState, u: GameUpdate): GameListState {
  return {
    last_round: state.last_round === null ? u.last_round : Math.max(state.last_round, u.last_round),
    last_update: state.last_update === null ? u.last_update : Math.max(state.last_update, u.last_update),
  };
}
