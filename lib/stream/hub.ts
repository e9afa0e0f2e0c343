/**
 * The fan-out hub of an edge node (docs/conventions.md §8): one hub per process, fed by the edge's own
 * consumer of every partition of `rounds`, feeding every transport through one `Subscription`
 * interface. Each round is serialised once per wire form, not once per subscriber: a `Delivery`
 * caches the stream-form JSON per reported type (a slot round reads `slots` to a game
 * subscriber and `multiplier` to a `multiplier` subscriber, as in history by type), and its
 * position and envelope per selection (lib/stream/position.ts, envelope.ts). The publish loop
 * allocates nothing per subscriber.
 *
 * Besides subscribers, the hub feeds channels (`feed`): one per selection and wire form, each
 * handing a round once to a server that fans it out itself (uWebSockets.js topics,
 * lib/stream/shared.ts), so a live subscriber that joined one costs no JavaScript per round.
 *
 * Lifecycle events (lib/stream/lifecycle.ts) go through the hub too, to the subscribers that
 * asked for them only, and the hub keeps each game's current phase (betting or running) for
 * subscribers that arrive in the middle of a round.
 */
import { GAME_SLUGS, type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import { type Delivery, type Stamp, selectionKey, stampPosition } from './delivery.ts';
import { lifecycleEnvelope } from './envelope.ts';
import type { LifecycleUpdate } from './lifecycle.ts';
import { formatPosition } from './position.ts';
import { type Selection, selectionLabel, slugsOf } from './selection.ts';

export { Delivery, selectionKey } from './delivery.ts';
export { reportedType, type Selection, slugsOf } from './selection.ts';

/**
 * Round ids the hub remembers per game to drop a round published twice: far more than a source
 * meets out of order (the overlap of its start-up scan and its live reader is one round per game).
 */
export const RECENT_IDS = 4_096;

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
  private readonly channels = new Router<Subscription>();
  private readonly phases = new Router<LifecycleSubscription>();
  private readonly latestByGame = new Map<GameSlug, Delivery>();
  /** Ids of the rounds published last per game (deduplication; insertion order = publish order). */
  private readonly recentByGame = new Map<GameSlug, Set<number>>();
  /** Id of the round published last per game, in log order (a delivery's `prev`). */
  private readonly lastInLog = new Map<GameSlug, number>();
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
   * Adds a channel: a receiver routed by its selection like a subscriber, that hands each round
   * to a server's own fan-out (lib/stream/shared.ts). Channels are not subscribers: `size` leaves
   * them out. A channel gets a round after the subscribers of the same publish. The returned
   * function removes it.
   */
  feed(channel: Subscription): () => void {
    return this.channels.add(channel);
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

  /** Number of round subscribers the hub delivers to itself (one on a server's topic is not counted). */
  get size(): number {
    return this.rounds.size;
  }

  /**
   * Publishes a round to every matching subscriber. A round already published (the same id of its
   * game, among the last {@link RECENT_IDS} published) is dropped, so subscribers never see a round
   * twice; a round of a lower id than one published is NOT dropped for being lower: it is new to
   * every subscriber (its source admitted it, rules/rounds/admission.ts). The game's latest round
   * (`latest()`, positions) stays the one of the highest id. The game's lifecycle phase ends with
   * its own round.
   * @returns whether the round was new.
   */
  publish(d: Delivery): boolean {
    const slug = d.round.game_slug;
    const rid = d.round.round_id;
    const seen = this.recent(slug);
    if (seen.has(rid)) return false;
    seen.add(rid);
    if (seen.size > RECENT_IDS) {
      const oldest = seen.values().next();
      if (!oldest.done) seen.delete(oldest.value);
    }
    const prev = this.latestByGame.get(slug);
    if (!prev || prev.round.round_id < rid) this.latestByGame.set(slug, d);
    const before = this.lastInLog.get(slug);
    this.lastInLog.set(slug, rid);
    d.markPublished(this.stamp(), before ?? null);
    const phase = this.phaseByGame.get(slug);
    if (phase && phase.event.round_id === rid) this.phaseByGame.delete(slug);
    const to = (sub: Subscription) => sub.deliver(d);
    this.rounds.each(slug, to);
    this.channels.each(slug, to);
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
    if (this.recent(slug).has(rid)) return false;
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

  /** The ids of `slug`'s rounds published last (oldest first), created on first use. */
  private recent(slug: GameSlug): Set<number> {
    let s = this.recentByGame.get(slug);
    if (!s) {
      s = new Set();
      this.recentByGame.set(slug, s);
    }
    return s;
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
