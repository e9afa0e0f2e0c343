/**
 * The fan-out hub of an edge node (STYLE.md §8): one hub per process, fed by the edge's own
 * consumer of every partition of `rounds`, feeding every transport through one `Subscription`
 * interface. Each round is serialised once per wire form, not once per subscriber: a `Delivery`
 * caches the stream-form JSON per reported type (a slot round reads `slots` to a game
 * subscriber and `multiplier` to a `multiplier` subscriber, as in history by type), and its
 * position and envelope per selection (lib/stream/position.ts, envelope.ts). The publish loop
 * allocates nothing per subscriber.
 *
 * Lifecycle events (lib/stream/lifecycle.ts) go through the hub too, to the subscribers that
 * asked for them only, and the hub keeps each game's current phase (betting or running) for
 * subscribers that arrive in the middle of a round.
 */
import { GAME_SLUGS, type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { type RoundFinished, type StreamRound, toStreamForm } from '../../rules/rounds/round.ts';
import { lifecycleEnvelope, roundEnvelope } from './envelope.ts';
import type { LifecycleUpdate } from './lifecycle.ts';
import { formatPosition, type Position } from './position.ts';
import { reportedType, type Selection, selectionLabel, slugsOf } from './selection.ts';

export { reportedType, type Selection, slugsOf } from './selection.ts';

/**
 * A cache key per selection that allocates nothing: the slug, the type or `all`. Game slugs and
 * type names never coincide (catalogue: crash, double, slot, wall-street; multiplier, color,
 * slots, trending), which selection.unit.test.ts checks.
 */
export function selectionKey(s: Selection): string {
  return s.kind === 'game' ? s.slug : s.kind === 'type' ? s.type : 'all';
}

/** Index of a game in GAME_SLUGS (the layout of a delivery's stamp). */
const SLOT = new Map<string, number>(GAME_SLUGS.map((g, i) => [g, i]));

/**
 * The hub's view of the log when a round was published: the latest round id and append time of
 * every game (0 when none), then the hub's origin time. Positions of live rounds come from it.
 */
type Stamp = Float64Array;

/** The position a stamp describes for `selection`. */
function stampPosition(stamp: Stamp, selection: Selection): Position {
  const origin = stamp[GAME_SLUGS.length * 2] as number;
  let t = Number.POSITIVE_INFINITY;
  const last = new Map<GameSlug, number>();
  for (const g of slugsOf(selection)) {
    const i = (SLOT.get(g) as number) * 2;
    const rid = stamp[i] as number;
    if (rid > 0) {
      last.set(g, rid);
      t = Math.min(t, stamp[i + 1] as number);
    } else t = Math.min(t, origin);
  }
  return { t: Number.isFinite(t) ? t : origin, last };
}

/** One round on its way to subscribers, with its log position and lazily built wire forms. */
export class Delivery {
  private readonly json = new Map<string, string>();
  private readonly forms = new Map<string, StreamRound>();
  private texts: Map<string, string> | undefined;
  private stamp: Stamp | undefined;
  /** Previous round id of this game in the log, as the hub knew it when publishing (null: none). */
  prevRoundId: number | null = null;

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

  /** Set by the hub when it publishes this round. */
  markPublished(stamp: Stamp, prevRoundId: number | null): void {
    this.stamp = stamp;
    this.prevRoundId = prevRoundId;
  }

  /**
   * The position of a live subscriber of `selection` once it has this round (built once per
   * selection). Every live subscriber of a selection has been given the same rounds, so they share it.
   * @throws Error for a delivery the hub has not published (a catch-up round: its subscriber tracks its own).
   */
  position(selection: Selection): string {
    return this.cached(`p:${selectionKey(selection)}`, () => {
      if (!this.stamp) throw new Error('position of a round the hub has not published');
      return formatPosition(selection, stampPosition(this.stamp, selection));
    });
  }

  /** The live `round` envelope for `selection` (built once per selection). */
  envelope(selection: Selection): string {
    return this.cached(`e:${selectionKey(selection)}`, () =>
      roundEnvelope(selectionLabel(selection), this.position(selection), this.streamJson(selection), {
        prev: this.prevRoundId,
      }),
    );
  }

  private cached(key: string, build: () => string): string {
    this.texts ??= new Map();
    let s = this.texts.get(key);
    if (s === undefined) {
      s = build();
      this.texts.set(key, s);
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

/** A subscriber of lifecycle messages (opt-in). */
export interface LifecycleSubscription {
  readonly selection: Selection;
  /** Called synchronously from the hub: must not block. */
  lifecycle(u: LifecycleUpdate, envelopes: LifecycleEnvelopes): void;
}

/** The `lifecycle` envelopes of one event, built once per selection however many subscribers take it. */
export class LifecycleEnvelopes {
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly update: LifecycleUpdate,
    private readonly positionOf: (selection: Selection) => string,
  ) {}

  /** The envelope for a subscriber of `selection`. */
  for(selection: Selection): string {
    const key = selectionKey(selection);
    let s = this.texts.get(key);
    if (s === undefined) {
      s = lifecycleEnvelope(selectionLabel(selection), this.positionOf(selection), this.update.json());
      this.texts.set(key, s);
    }
    return s;
  }
}

/** Subscribers of one kind by game, by type and of everything; routes a game's items to them. */
class Router<T extends { readonly selection: Selection }> {
  private readonly byGame = new Map<string, Set<T>>();
  private readonly byType = new Map<string, Set<T>>();
  private readonly all = new Set<T>();

  add(sub: T): () => void {
    const sel = sub.selection;
    let set = this.all;
    if (sel.kind !== 'all') {
      const [map, key] = sel.kind === 'game' ? [this.byGame, sel.slug] : [this.byType, sel.type];
      set = map.get(key) ?? new Set();
      map.set(key, set);
    }
    set.add(sub);
    return () => {
      set.delete(sub);
    };
  }

  get size(): number {
    let n = this.all.size;
    for (const s of this.byGame.values()) n += s.size;
    for (const s of this.byType.values()) n += s.size;
    return n;
  }

  /** Calls `visit` for every subscriber of `slug`: `all`, the game, then each type it belongs to. */
  each(slug: GameSlug, visit: (sub: T) => void): void {
    for (const sub of this.all) visit(sub);
    const g = this.byGame.get(slug);
    if (g) for (const sub of g) visit(sub);
    for (const t of gameBySlug(slug)?.memberOf ?? []) {
      const s = this.byType.get(t);
      if (s) for (const sub of s) visit(sub);
    }
  }
}

/**
 * Routes each published round to the subscribers of its game, of each type it belongs to, and of
 * `all`; keeps the latest delivery per game (the SSE `initial` event, gRPC GetLatest, positions)
 * and the current lifecycle phase per game.
 */
export class FanOutHub {
  private readonly rounds = new Router<Subscription>();
  private readonly phases = new Router<LifecycleSubscription>();
  private readonly latestByGame = new Map<GameSlug, Delivery>();
  private readonly phaseByGame = new Map<GameSlug, LifecycleUpdate>();
  private readonly taps = new Set<Subscription>();

  /**
   * @param origin Unix ms from which this hub has seen every round (its source's start): the
   *   position's `t` for a game the hub has no round of.
   */
  constructor(readonly origin: number = Date.now()) {}

  /** Adds `sub`; the returned function removes it (idempotent). */
  subscribe(sub: Subscription): () => void {
    return this.rounds.add(sub);
  }

  /**
   * Adds an internal receiver of every round (the edge's memory of recent rounds): not a
   * subscriber, so `size` leaves it out. The returned function removes it.
   */
  tap(sub: Subscription): () => void {
    this.taps.add(sub);
    return () => {
      this.taps.delete(sub);
    };
  }

  /** Adds a lifecycle subscriber; the returned function removes it (idempotent). */
  subscribeLifecycle(sub: LifecycleSubscription): () => void {
    return this.phases.add(sub);
  }

  /** Number of current round subscribers. */
  get size(): number {
    return this.rounds.size;
  }

  /**
   * Publishes a round to every matching subscriber. A round older than or equal to the latest
   * one already published for its game (a redelivery after a consumer restart) is dropped, so
   * subscribers never see a round twice. The game's lifecycle phase ends with its round.
   * @returns whether the round was new.
   */
  publish(d: Delivery): boolean {
    const slug = d.round.game_slug;
    const prev = this.latestByGame.get(slug);
    if (prev && prev.round.round_id >= d.round.round_id) return false;
    this.latestByGame.set(slug, d);
    d.markPublished(this.stamp(), prev ? prev.round.round_id : null);
    const phase = this.phaseByGame.get(slug);
    if (phase && phase.event.round_id <= d.round.round_id) this.phaseByGame.delete(slug);
    this.rounds.each(slug, (sub) => sub.deliver(d));
    for (const t of this.taps) t.deliver(d);
    return true;
  }

  /**
   * Publishes a lifecycle event to its subscribers and makes it the game's current phase. An
   * event of a round already finished, or older than the current phase's round, is dropped.
   * @returns whether it was new.
   */
  publishLifecycle(u: LifecycleUpdate): boolean {
    const slug = u.slug;
    const rid = u.event.round_id;
    if (rid <= (this.latestByGame.get(slug)?.round.round_id ?? 0)) return false;
    const phase = this.phaseByGame.get(slug);
    if (phase && phase.event.round_id > rid) return false;
    if (
      phase &&
      phase.event.round_id === rid &&
      !(phase.event.type === 'RoundOpened' && u.event.type === 'BettingClosed')
    )
      return false;
    this.phaseByGame.set(slug, u);
    const envelopes = new LifecycleEnvelopes(u, (sel) => this.position(sel));
    this.phases.each(slug, (sub) => sub.lifecycle(u, envelopes));
    return true;
  }

  /** The latest round of each game the selection covers, newest last. */
  latest(selection: Selection): Delivery[] {
    return slugsOf(selection)
      .map((s) => this.latestByGame.get(s))
      .filter((d): d is Delivery => d !== undefined)
      .sort((a, b) => a.appendedAt - b.appendedAt);
  }

  /** The current phase (the last lifecycle event of a round not finished yet) of each game of `selection`, oldest first. */
  currentPhases(selection: Selection): LifecycleUpdate[] {
    return slugsOf(selection)
      .map((s) => this.phaseByGame.get(s))
      .filter((u): u is LifecycleUpdate => u !== undefined)
      .sort((a, b) => a.appendedAt - b.appendedAt);
  }

  /** The position of a live subscriber of `selection` now. */
  position(selection: Selection): string {
    return formatPosition(selection, stampPosition(this.stamp(), selection));
  }

  /** The hub's current view (see Stamp). */
  private stamp(): Stamp {
    const s = new Float64Array(GAME_SLUGS.length * 2 + 1);
    GAME_SLUGS.forEach((g, i) => {
      const d = this.latestByGame.get(g);
      if (d) {
        s[i * 2] = d.round.round_id;
        s[i * 2 + 1] = d.appendedAt;
      }
    });
    s[GAME_SLUGS.length * 2] = this.origin;
    return s;
  }
}
