/**
 * The newest rounds of every game and every type in memory, pre-serialised, so
 * `/api/latest` and `/api/history` answer without a database query once the window is warm.
 *
 * Each game keeps its newest `capacity` rows (finished_at, then round_id, descending: the order of
 * lib/db/rounds-read.ts) as one JSON array text with the end offset of every row, so the body of
 * `history?limit=n` is a prefix of that text plus `]`: no per-request serialisation, no copy of
 * rows. A type's window is the merge of its games' windows, rebuilt when one of them changes.
 * The latest round is the first row of the same window, so a round visible in `latest` is in
 * `history` from the same state. Fed by window-feed.ts from the projector's committed writes.
 */

import type { RoundRow } from '../../../lib/db/rounds-read.ts';
import { type GameInfo, type GameType, gameById, gamesOfType } from '../../../rules/games/catalog.ts';
import { toHistoryRow, toLatestRound } from './queries.ts';

/** Rows per game and per type (the largest `limit` the API accepts). */
export const WINDOW_CAPACITY = 1000;

/** A JSON array of rows, as text, with the end offset of each row (prefixes are bodies). */
interface Serialised {
  readonly text: string;
  /** ends[i]: length of the text holding rows 0..i (without the closing bracket). */
  readonly ends: readonly number[];
}

const EMPTY: Serialised = { text: '[', ends: [] };

function serialise(rows: readonly RoundRow[], asType?: GameType): Serialised {
  let text = '[';
  const ends: number[] = [];
  for (const r of rows) {
    text += (ends.length === 0 ? '' : ',') + JSON.stringify(toHistoryRow(r, asType));
    ends.push(text.length);
  }
  return { text, ends };
}

/** The body of the first `limit` rows. */
function prefix(s: Serialised, limit: number): string {
  const n = Math.min(limit, s.ends.length);
  return n === 0 ? '[]' : `${s.text.slice(0, s.ends[n - 1])}]`;
}

/** Newest first: finished_at, then round_id, descending. */
const newestFirst = (a: RoundRow, b: RoundRow): number =>
  a.finished_at === b.finished_at ? b.round_id - a.round_id : a.finished_at < b.finished_at ? 1 : -1;

interface GameWindow {
  rows: RoundRow[];
  history: Serialised;
  latest: string | null;
}

/** See the module comment. Single-threaded: every read sees one consistent state. */
export class RoundsWindow {
  readonly #capacity: number;
  readonly #games = new Map<number, GameWindow>();
  readonly #types = new Map<GameType, Serialised>();
  #warm = false;

  constructor(capacity = WINDOW_CAPACITY) {
    this.#capacity = capacity;
  }

  /** Whether reads are answered from memory (else the caller asks Postgres). */
  get warm(): boolean {
    return this.#warm;
  }

  /** Set by the feed: true once every game was loaded and while its refreshes succeed. */
  set warm(value: boolean) {
    this.#warm = value;
  }

  /** Replaces a game's window with `rows` (its newest, newest first). */
  replace(gameId: number, rows: readonly RoundRow[]): void {
    this.#set(gameId, [...rows].sort(newestFirst).slice(0, this.#capacity));
  }

  /**
   * Adds rows committed since the last fetch, in any finish-time order (a row finished before the
   * head takes its place in the order; a row already held is ignored).
   * @returns whether the window changed.
   */
  add(gameId: number, rows: readonly RoundRow[]): boolean {
    const cur = this.#games.get(gameId)?.rows ?? [];
    const held = new Set(cur.map((r) => r.round_id));
    const fresh = rows.filter((r) => !held.has(r.round_id));
    if (fresh.length === 0) return false;
    this.#set(gameId, [...fresh, ...cur].sort(newestFirst).slice(0, this.#capacity));
    return true;
  }

  /** The head of a game's window (undefined when empty): where the next refresh starts. */
  head(gameId: number): RoundRow | undefined {
    return this.#games.get(gameId)?.rows[0];
  }

  /** Body of GET /api/latest/:game; null when the game has no round; undefined when cold. */
  latest(game: GameInfo): string | null | undefined {
    if (!this.#warm) return undefined;
    return this.#games.get(game.id)?.latest ?? null;
  }

  /** Body of GET /api/history/:game?limit; undefined when cold. */
  history(game: GameInfo, limit: number): string | undefined {
    if (!this.#warm) return undefined;
    return prefix(this.#games.get(game.id)?.history ?? EMPTY, limit);
  }

  /** Body of GET /api/history/type/:type?limit; undefined when cold. */
  historyByType(type: GameType, limit: number): string | undefined {
    if (!this.#warm) return undefined;
    let s = this.#types.get(type);
    if (!s) {
      const rows = gamesOfType(type)
        .flatMap((g) => this.#games.get(g.id)?.rows ?? [])
        .sort(newestFirst)
        .slice(0, this.#capacity);
      s = serialise(rows, type);
      this.#types.set(type, s);
    }
    return prefix(s, limit);
  }

  #set(gameId: number, rows: RoundRow[]): void {
    const first = rows[0];
    this.#games.set(gameId, {
      rows,
      history: serialise(rows),
      latest: first ? JSON.stringify(toLatestRound(first)) : null,
    });
    for (const type of gameById(gameId)?.memberOf ?? []) this.#types.delete(type);
  }
}
