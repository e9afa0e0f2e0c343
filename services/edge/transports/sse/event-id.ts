/**
 * Resumable SSE event ids (DESIGN.md: a reconnect with Last-Event-ID gets the missed rounds from
 * the log before live ones, none twice).
 *
 * An id states what the subscriber has been given: for each game of the subscription, the round id
 * of the last round delivered (a game it has seen nothing of is left out), and `t`, a log time
 * (Unix ms) at or before the append time of every round it may still be missing. Example for
 * `/sse/type/multiplier`: `t=1732233456789;crash=1000000000042;slot=3000000000017`.
 *
 * Why this shape: round ids only grow within a game, so "round_id greater than the last one per
 * game" is exactly the set of missed rounds, and `t` turns into a start offset per partition with
 * the broker's offset-by-timestamp lookup (the first offset whose timestamp is >= t can only be at
 * or before the last delivered round), so the resume needs no per-client state on any edge.
 */

import { type Selection, slugsOf } from '../../../../lib/stream/hub.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';

/** What a subscriber has received, per game. */
export interface Position {
  /** Round id of the last round delivered of each game; absent: none yet. */
  readonly last: ReadonlyMap<GameSlug, number>;
  /** Unix ms at or before the append time of every round not yet delivered. */
  readonly t: number;
}

/** Longest id accepted; a real one is under 100 characters. */
export const MAX_EVENT_ID_LENGTH = 256;
/** Up to 15 digits: every value stays an exact JS number (below 2^53). */
const DIGITS = /^\d{1,15}$/;

/** The id text of `p` (games in catalogue order, for stable ids). */
export function formatEventId(selection: Selection, p: Position): string {
  let s = `t=${Math.floor(p.t)}`;
  for (const slug of slugsOf(selection)) {
    const rid = p.last.get(slug);
    if (rid !== undefined) s += `;${slug}=${rid}`;
  }
  return s;
}

export type ParsedEventId =
  | { readonly ok: true; readonly position: Position }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses a Last-Event-ID for `selection`. Rejected (the caller starts live): empty, too long,
 * not `t=<ms>` followed by `;<slug>=<round id>` pairs, a slug outside the selection or repeated.
 * Whether it lies in the future is checked by the caller, which knows the log.
 */
export function parseEventId(selection: Selection, raw: string): ParsedEventId {
  if (raw.length === 0 || raw.length > MAX_EVENT_ID_LENGTH) return { ok: false, reason: 'length' };
  const [head, ...pairs] = raw.split(';');
  if (!head?.startsWith('t=') || !DIGITS.test(head.slice(2))) return { ok: false, reason: 'no t=<ms>' };
  const allowed = new Set<string>(slugsOf(selection));
  const last = new Map<GameSlug, number>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const slug = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (eq < 1 || !allowed.has(slug) || last.has(slug as GameSlug) || !DIGITS.test(value))
      return { ok: false, reason: `bad pair ${JSON.stringify(pair)}` };
    last.set(slug as GameSlug, Number(value));
  }
  return { ok: true, position: { last, t: Number(head.slice(2)) } };
}
