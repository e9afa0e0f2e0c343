/**
 * The fan-out hub of an edge node (STYLE.md §8): one hub per process, fed by the edge's own
 * consumer of every partition of `rounds`, feeding every transport through one `Subscription`
 * interface. Each round is serialised once per wire form, not once per subscriber: a `Delivery`
 * caches the stream-form JSON per reported type (a slot round reads `slots` to a game
 * subscriber and `multiplier` to a `multiplier` subscriber, as in history by type).
 */
import { type GameSlug, type GameType, gameBySlug, gamesOfType } from '../../rules/games/catalog.ts';
import { type RoundFinished, type StreamRound, toStreamForm } from '../../rules/rounds/round.ts';

/** What a subscriber asked for. */
export type Selection =
  | { readonly kind: 'game'; readonly slug: GameSlug }
  | { readonly kind: 'type'; readonly type: GameType }
  | { readonly kind: 'all' };

/** The game type a subscriber of `selection` sees in `game_type`. */
export function reportedType(selection: Selection, round: RoundFinished): GameType {
  return selection.kind === 'type' ? selection.type : round.game_type;
}

/** Slugs of the games a selection covers. */
export function slugsOf(selection: Selection): GameSlug[] {
  if (selection.kind === 'game') return [selection.slug];
  if (selection.kind === 'type') return gamesOfType(selection.type).map((g) => g.slug);
  return ['crash', 'double', 'slot', 'wall-street'];
}

/** One round on its way to subscribers, with its log position and lazily built wire forms. */
export class Delivery {
  private readonly json = new Map<GameType, string>();
  private readonly forms = new Map<GameType, StreamRound>();

  constructor(
    readonly round: RoundFinished,
    /** Log append time, Unix ms (the stream form's `timestamp`). */
    readonly appendedAt: number,
    readonly partition: number,
    readonly offset: bigint,
  ) {}

  /** The stream form as seen by `selection` (built once per type). */
  streamForm(selection: Selection): StreamRound {
    const t = reportedType(selection, this.round);
    let f = this.forms.get(t);
    if (!f) {
      f = toStreamForm(this.round, this.appendedAt, t);
      this.forms.set(t, f);
    }
    return f;
  }

  /** The stream form's JSON text as seen by `selection` (serialised once per type). */
  streamJson(selection: Selection): string {
    const t = reportedType(selection, this.round);
    let s = this.json.get(t);
    if (s === undefined) {
      s = JSON.stringify(this.streamForm(selection));
      this.json.set(t, s);
    }
    return s;
  }
}

/** A subscriber as the hub sees it; each transport implements it. */
export interface Subscription {
  readonly selection: Selection;
  /** Called synchronously from the hub's publish loop: must not block (queue or drop, never await). */
  deliver(d: Delivery): void;
}

/**
 * Routes each published round to the subscribers of its game, of each type it belongs to, and of
 * `all`; keeps the latest delivery per game (the SSE `initial` event and gRPC GetLatest).
 */
export class FanOutHub {
  private readonly byGame = new Map<GameSlug, Set<Subscription>>();
  private readonly byType = new Map<GameType, Set<Subscription>>();
  private readonly all = new Set<Subscription>();
  private readonly latestByGame = new Map<GameSlug, Delivery>();

  /** Adds `sub`; the returned function removes it (idempotent). */
  subscribe(sub: Subscription): () => void {
    const set = this.setFor(sub.selection);
    set.add(sub);
    return () => {
      set.delete(sub);
    };
  }

  /** Number of current subscribers. */
  get size(): number {
    let n = this.all.size;
    for (const s of this.byGame.values()) n += s.size;
    for (const s of this.byType.values()) n += s.size;
    return n;
  }

  /**
   * Publishes a round to every matching subscriber. A round older than or equal to the latest
   * one already published for its game (a redelivery after a consumer restart) is dropped, so
   * subscribers never see a round twice.
   * @returns whether the round was new.
   */
  publish(d: Delivery): boolean {
    const slug = d.round.game_slug;
    const prev = this.latestByGame.get(slug);
    if (prev && prev.round.round_id >= d.round.round_id) return false;
    this.latestByGame.set(slug, d);
    const info = gameBySlug(slug);
    const targets: Set<Subscription>[] = [this.all];
    const g = this.byGame.get(slug);
    if (g) targets.push(g);
    for (const t of info?.memberOf ?? []) {
      const s = this.byType.get(t);
      if (s) targets.push(s);
    }
    for (const set of targets) {
      for (const sub of set) sub.deliver(d);
    }
    return true;
  }

  /** The latest round of each game the selection covers, newest last. */
  latest(selection: Selection): Delivery[] {
    return slugsOf(selection)
      .map((s) => this.latestByGame.get(s))
      .filter((d): d is Delivery => d !== undefined)
      .sort((a, b) => a.appendedAt - b.appendedAt);
  }

  private setFor(sel: Selection): Set<Subscription> {
    if (sel.kind === 'all') return this.all;
    const [map, key] = sel.kind === 'game' ? [this.byGame, sel.slug] : [this.byType, sel.type];
    let s = (map as Map<string, Set<Subscription>>).get(key);
    if (!s) {
      s = new Set();
      (map as Map<string, Set<Subscription>>).set(key, s);
    }
    return s;
  }
}
