/**
 * The stream position: one text, the same on every protocol (WebSocket `?since=`, SSE ids and
 * `?since=`, gRPC `since` and `Round.position`, WebTransport `since=`), that says what a subscriber
 * has been given and lets any edge resume it from the log (docs/architecture.md: SSE ids are
 * resumable). It is the SSE event id handed out from the start, unchanged, so every id handed out before stays valid.
 *
 * Form: `t=<unix ms>` followed by `;<slug>=<round id>` for each game of the subscription the
 * subscriber has a round of, games in catalogue order. Example for `type:multiplier`:
 * `t=1732233456789;crash=1000000000042;slot=3000000000017`.
 *
 * Meaning: of each named game, every round up to that round id has been given; `t` is at or before
 * the append time of every round still missing (the last round of each named game was appended at
 * or after it, and a game not named has had nothing given since `t`). `t=0` names the start of the
 * log. Round ids only grow within a game (rules/rounds/decider.ts), so "round id greater than the
 * last one per game" is exactly the missed set, and `t` becomes a start offset per partition by the
 * broker's offset-by-timestamp lookup: no edge keeps state per client.
 *
 * A client can build a position from plain stream-form rounds too: `t` = the smallest `timestamp`
 * among the last round of each game it holds, plus `<slug>=<round_id>` of each.
 */
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { type Selection, slugsOf } from './selection.ts';

/** What a subscriber has received, per game. */
export interface Position {
  /** Round id of the last round given of each game; absent: none yet. */
  readonly last: ReadonlyMap<GameSlug, number>;
  /** Unix ms at or before the append time of every round not yet given. */
  readonly t: number;
}

/** Longest position accepted, characters; a real one is under 100 (all four games: about 90). */
export const MAX_POSITION_LENGTH = 256;
/** Up to 15 digits: every value stays an exact JS number (below 2^53). */
const DIGITS = /^\d{1,15}$/;

/** Why a position text was not accepted. */
export type PositionFault = 'oversized' | 'malformed' | 'other-games';

export type ParsedPosition =
  | { readonly ok: true; readonly position: Position }
  | { readonly ok: false; readonly fault: PositionFault; readonly reason: string };

/** The position text of `p` for `selection` (games in catalogue order, for stable texts). */
export function formatPosition(selection: Selection, p: Position): string {
  let s = `t=${Math.floor(p.t)}`;
  for (const slug of slugsOf(selection)) {
    const rid = p.last.get(slug);
    if (rid !== undefined) s += `;${slug}=${rid}`;
  }
  return s;
}

/**
 * Parses a position for `selection`. Refused: empty or longer than {@link MAX_POSITION_LENGTH}
 * (`oversized`); not `t=<ms>` followed by `;<slug>=<round id>` pairs, or a game repeated
 * (`malformed`); a game outside the selection (`other-games`: a crash position cannot resume a
 * double subscription). Whether it lies in the future is for the caller, which knows the log.
 */
export function parsePosition(selection: Selection, raw: string): ParsedPosition {
  if (raw.length > MAX_POSITION_LENGTH)
    return { ok: false, fault: 'oversized', reason: `longer than ${MAX_POSITION_LENGTH} characters` };
  if (raw.length === 0) return { ok: false, fault: 'malformed', reason: 'empty' };
  const [head, ...pairs] = raw.split(';');
  if (!head?.startsWith('t=') || !DIGITS.test(head.slice(2)))
    return { ok: false, fault: 'malformed', reason: 'no t=<ms>' };
  const allowed = new Set<string>(slugsOf(selection));
  const known = new Set<string>(GAME_SLUGS);
  const last = new Map<GameSlug, number>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const slug = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (eq < 1 || last.has(slug as GameSlug) || !DIGITS.test(value))
      return { ok: false, fault: 'malformed', reason: `bad pair ${JSON.stringify(pair)}` };
    if (!allowed.has(slug))
      return known.has(slug)
        ? { ok: false, fault: 'other-games', reason: `${slug} is not part of this subscription` }
        : { ok: false, fault: 'malformed', reason: `unknown game ${JSON.stringify(slug)}` };
    last.set(slug as GameSlug, Number(value));
  }
  return { ok: true, position: { last, t: Number(head.slice(2)) } };
}

/** The last round given of one game: its id and append time (Unix ms). */
interface Mark {
  rid: number;
  at: number;
}

/**
 * The position of one subscriber as rounds are given to it, and the filter that gives no round
 * twice: a round is new when its id is above the last one of its game. `observe` allocates only
 * the first time a game is seen, so a live subscriber costs no allocation per round.
 */
export class PositionTracker {
  private readonly marks = new Map<GameSlug, Mark>();

  /**
   * @param origin the position given so far (a resume's, or the subscription's start).
   * @param at append times (Unix ms) of the rounds `origin` names, when known (else `origin.t`).
   */
  constructor(
    readonly selection: Selection,
    private readonly origin: Position,
    at?: ReadonlyMap<GameSlug, number>,
  ) {
    for (const [g, rid] of origin.last) this.marks.set(g, { rid, at: at?.get(g) ?? origin.t });
  }

  /** Whether a round of `slug` with id `rid` has not been given yet. */
  isNew(slug: GameSlug, rid: number): boolean {
    const m = this.marks.get(slug);
    return m === undefined || rid > m.rid;
  }

  /**
   * Records a round as given.
   * @returns false (and records nothing) when it was given before.
   */
  observe(slug: GameSlug, rid: number, at: number): boolean {
    const m = this.marks.get(slug);
    if (m === undefined) {
      this.marks.set(slug, { rid, at });
      return true;
    }
    if (rid <= m.rid) return false;
    m.rid = rid;
    m.at = at;
    return true;
  }

  /** The last round id given of `slug`, if any. */
  lastOf(slug: GameSlug): number | undefined {
    return this.marks.get(slug)?.rid;
  }

  /** What has been given so far: `t` is the oldest last-round time, or the origin's for a game with none. */
  position(): Position {
    let t = Number.POSITIVE_INFINITY;
    const last = new Map<GameSlug, number>();
    for (const g of slugsOf(this.selection)) {
      const m = this.marks.get(g);
      t = Math.min(t, m ? m.at : this.origin.t);
      if (m) last.set(g, m.rid);
    }
    return { t: Number.isFinite(t) ? t : this.origin.t, last };
  }

  /**
   * Whether {@link position} is `p` (the same text), found without building either: a live
   * subscriber's tracker usually stands where the hub's shared position of its selection does.
   */
  equals(p: Position): boolean {
    let t = Number.POSITIVE_INFINITY;
    for (const g of slugsOf(this.selection)) {
      const m = this.marks.get(g);
      if (m?.rid !== p.last.get(g)) return false;
      t = Math.min(t, m ? m.at : this.origin.t);
    }
    return Math.floor(Number.isFinite(t) ? t : this.origin.t) === Math.floor(p.t);
  }

  /** {@link position} as text. */
  text(): string {
    return formatPosition(this.selection, this.position());
  }
}
