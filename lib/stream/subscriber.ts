/**
 * One subscription as every transport runs it: optional latest rounds on subscribe, a
 * catch-up from a position, the `recovered` verdict, then live rounds (and lifecycle messages when
 * asked), each round given at most once and, per game, in order.
 *
 * The subscription joins the hub before anything is read, holding live rounds while it catches up,
 * and the catch-up ends where the live source stood at that moment, so nothing falls between the
 * two; a round that comes from both is given once (PositionTracker). A subscriber that holds more
 * than MAX_PENDING live rounds while catching up is ended as slow: it reconnects from its position,
 * which has moved on.
 *
 * Once live, a subscription whose transport can fan out natively (StreamSink.joinShared: a
 * uWebSockets.js topic per selection and wire form, lib/stream/shared.ts) leaves the hub's list of
 * subscribers and joins its topic: from then on it costs no JavaScript per round. The switch happens
 * in one synchronous step right after the held rounds are written, between two publishes, so every
 * round reaches it exactly once, either held or through the topic. Its position is then the hub's
 * (every live subscriber of a selection has been given the same rounds), read when asked.
 *
 * The transport writes (StreamSink): this file never touches a socket.
 */
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { CatchUpCursor, CatchUpResult, CatchUpScheduler } from './catch-up.ts';
import type { RecoveredInfo } from './envelope.ts';
import type { Delivery, FanOutHub, LifecycleEnvelopes, LifecycleSubscription, Subscription } from './hub.ts';
import { LifecycleEnvelopes as Envelopes } from './hub.ts';
import type { LifecycleUpdate } from './lifecycle.ts';
import { type Position, PositionTracker } from './position.ts';
import type { ResumeDecision } from './resume.ts';
import type { Selection } from './selection.ts';

/** The no-op unsubscribe: one function, not a closure per subscription. */
const nothing = () => {};

/** Live rounds held for a subscriber that is catching up, at most. */
export const MAX_PENDING = 10_000;

/** How a round reaches a subscriber: live, replayed by a catch-up, or sent on subscribe (`latest`). */
export type RoundKind = 'live' | 'replay' | 'initial';

/** What a transport does for a subscription. */
export interface StreamSink {
  /** Writes one round (already deduplicated). Must not block. */
  round(d: Delivery, kind: RoundKind, sub: StreamSubscription): void;
  /** Writes a lifecycle message (only for subscriptions that asked for them). */
  lifecycle?(u: LifecycleUpdate, envelopes: LifecycleEnvelopes, sub: StreamSubscription): void;
  /** Once per subscription, after the catch-up (at once for a fresh one), before any live round. */
  recovered(info: RecoveredInfo, sub: StreamSubscription): void;
  /** True while the transport holds more unsent bytes than a catch-up may add to. */
  blocked(): boolean;
  /** True once the stream is gone (closed, ended as slow, revoked). */
  gone(): boolean;
  /** Runs several writes as one (optional: a transport that can pack them, e.g. WebSocket cork). */
  batch?(run: () => void): void;
  /**
   * Optional: takes the subscription's live rounds (and lifecycle messages when `lifecycle`) over
   * from the hub, through the server's own fan-out (lib/stream/shared.ts). Called once, when the
   * subscription goes live, after the rounds it held are written; false keeps it on `round`.
   */
  joinShared?(sub: StreamSubscription, lifecycle: boolean): boolean;
  /** Leaves what joinShared joined (the subscription ends, the connection may stay). */
  leaveShared?(sub: StreamSubscription): void;
  /** Too many live rounds held while catching up: end the stream as slow. */
  overflow(sub: StreamSubscription): void;
  /** The catch-up could not read the log: end the stream so that the client retries from its position. */
  failed(err: Error, sub: StreamSubscription): void;
}

/** The rounds a resume replays, and where they come from. */
export interface CatchUpPlan {
  readonly cursor: CatchUpCursor;
  readonly source: 'memory' | 'log';
}

/** What a subscription needs of its edge (lib/stream/core.ts). */
export interface SubscriptionHost {
  readonly hub: FanOutHub;
  readonly scheduler: CatchUpScheduler;
  /** Next offset per partition of the live source now (the end of a catch-up that starts now). */
  positions(): ReadonlyMap<number, bigint>;
  /** The rounds after `p` of `selection` up to `to`, from memory when it reaches back, else the log. */
  plan(
    selection: Selection,
    p: Position,
    to: ReadonlyMap<number, bigint>,
    tracker: PositionTracker,
  ): Promise<CatchUpPlan>;
}

export interface SubscriptionOptions {
  /** Latest rounds on subscribe, unless resuming: none, the newest of the selection (SSE `initial`), or each game's. */
  readonly latest: 'none' | 'newest' | 'each';
  /** Lifecycle messages once live. */
  readonly lifecycle: boolean;
}

/** How a subscription started. */
export interface StartOutcome {
  readonly info: RecoveredInfo;
  /** Where a resume read its rounds; absent for a fresh subscription. */
  readonly source?: 'memory' | 'log';
  readonly result?: CatchUpResult;
}

/** One subscription of one stream. Create it with {@link startSubscription}. */
export class StreamSubscription implements Subscription, LifecycleSubscription {
  readonly tracker: PositionTracker;
  private pending: Delivery[] | null = [];
  private closed = false;
  /** The hub, once the subscription has joined its shared topic (see joinShared). */
  private sharedHub: FanOutHub | undefined;
  private unsubscribe: () => void = nothing;
  private unsubscribeLifecycle: () => void = nothing;

  constructor(
    readonly selection: Selection,
    private readonly sink: StreamSink,
    origin: Position,
    at?: ReadonlyMap<GameSlug, number>,
  ) {
    this.tracker = new PositionTracker(selection, origin, at);
  }

  /** True once live (the catch-up is over). */
  get live(): boolean {
    return this.pending === null && !this.closed;
  }

  /** True once its live rounds come through the server's own fan-out (StreamSink.joinShared). */
  get shared(): boolean {
    return this.sharedHub !== undefined;
  }

  /**
   * The subscription's position now. On a shared topic it has been given every round the hub
   * published for its selection since it joined, so the hub's latest rounds bring the tracker up
   * to date first.
   */
  positionText(): string {
    const hub = this.sharedHub;
    if (hub && !this.closed)
      for (const d of hub.latest(this.selection))
        this.tracker.observe(d.round.game_slug, d.round.round_id, d.appendedAt);
    return this.tracker.text();
  }

  deliver(d: Delivery): void {
    if (this.closed || this.sink.gone()) return;
    if (this.pending) {
      this.pending.push(d);
      if (this.pending.length > MAX_PENDING) {
        this.pending = null;
        this.sink.overflow(this);
      }
      return;
    }
    // Live, every round the hub hands over is new to this subscription: the hub publishes a round
    // once, and the catch-up ended where the live rounds began. So a round of a lower id than one
    // given (out of order in the log) is sent too; the tracker keeps the highest id as its position.
    this.tracker.observe(d.round.game_slug, d.round.round_id, d.appendedAt);
    this.sink.round(d, 'live', this);
  }

  lifecycle(u: LifecycleUpdate, envelopes: LifecycleEnvelopes): void {
    if (this.pending || this.closed || this.sink.gone()) return;
    this.sink.lifecycle?.(u, envelopes, this);
  }

  /** Leaves the hub (or its shared topic); nothing more is written. Idempotent. */
  close(): void {
    if (this.sharedHub && !this.closed) this.sink.leaveShared?.(this);
    this.closed = true;
    this.pending = null;
    this.unsubscribe();
    this.unsubscribeLifecycle();
  }

  /** @internal Runs the start-up; see startSubscription. */
  async run(
    host: SubscriptionHost,
    decision: ResumeDecision,
    opts: SubscriptionOptions,
  ): Promise<StartOutcome> {
    this.unsubscribe = host.hub.subscribe(this);
    const to = host.positions();
    const since = rawOf(decision);
    if (decision.kind !== 'resume' && opts.latest !== 'none') {
      const latest = host.hub.latest(this.selection);
      for (const d of opts.latest === 'newest' ? latest.slice(-1) : latest)
        this.sink.round(d, 'initial', this);
    }
    let outcome: StartOutcome;
    if (decision.kind === 'resume') {
      const plan = await host
        .plan(this.selection, decision.position, to, this.tracker)
        .catch((err: Error) => err);
      const result: CatchUpResult =
        plan instanceof Error
          ? { outcome: 'failed', sent: 0, error: plan }
          : await host.scheduler.run({
              cursor: plan.cursor,
              emit: (d) => {
                if (this.tracker.observe(d.round.game_slug, d.round.round_id, d.appendedAt))
                  this.sink.round(d, 'replay', this);
              },
              blocked: () => this.sink.blocked(),
              gone: () => this.closed || this.sink.gone(),
              ...(this.sink.batch ? { batch: (run: () => void) => this.sink.batch?.(run) } : {}),
            });
      const complete = result.outcome === 'done';
      outcome = {
        info: {
          recovered: complete,
          since,
          replayed: result.sent,
          ...(complete
            ? {}
            : { reason: result.error ? `log unavailable: ${result.error.message}` : 'ended' }),
        },
        ...(plan instanceof Error ? {} : { source: plan.source }),
        result,
      };
      if (result.outcome === 'failed') {
        this.close();
        this.sink.failed(result.error ?? new Error('catch-up failed'), this);
        return outcome;
      }
    } else {
      outcome = {
        info: {
          recovered: false,
          since,
          replayed: 0,
          ...(decision.kind === 'live' ? { reason: decision.reason } : {}),
        },
      };
    }
    if (this.closed || this.sink.gone()) return outcome;
    this.sink.recovered(outcome.info, this);
    this.goLive(host, opts);
    return outcome;
  }

  private goLive(host: SubscriptionHost, opts: SubscriptionOptions): void {
    const held = this.pending ?? [];
    this.pending = null;
    for (const d of held) {
      if (this.closed || this.sink.gone()) return;
      if (this.tracker.observe(d.round.game_slug, d.round.round_id, d.appendedAt))
        this.sink.round(d, 'live', this);
    }
    if (this.closed || this.sink.gone()) return;
    if (this.sink.joinShared?.(this, opts.lifecycle)) {
      this.sharedHub = host.hub;
      this.unsubscribe();
      this.unsubscribe = nothing;
    } else if (opts.lifecycle) this.unsubscribeLifecycle = host.hub.subscribeLifecycle(this);
    if (!opts.lifecycle) return;
    for (const u of host.hub.currentPhases(this.selection))
      this.sink.lifecycle?.(u, new Envelopes(u, (s) => host.hub.position(s)), this);
  }
}

function rawOf(d: ResumeDecision): string | null {
  return d.kind === 'resume' || d.kind === 'live' ? d.raw : null;
}

/**
 * Starts a subscription: it joins the hub at once (synchronously), then replays and goes live in
 * the background.
 * @param decision from decideResume (lib/stream/resume.ts); `refused` must be answered by the caller instead.
 * @returns the subscription and its start-up (resolves once live, or ended; never rejects).
 */
export function startSubscription(
  host: SubscriptionHost,
  selection: Selection,
  sink: StreamSink,
  decision: Exclude<ResumeDecision, { kind: 'refused' }>,
  opts: SubscriptionOptions,
): { sub: StreamSubscription; started: Promise<StartOutcome> } {
  const origin: Position =
    decision.kind === 'resume' ? decision.position : { t: Date.now(), last: latestIds(host.hub, selection) };
  const at = decision.kind === 'resume' ? undefined : latestTimes(host.hub, selection);
  const sub = new StreamSubscription(selection, sink, origin, at);
  return { sub, started: sub.run(host, decision, opts) };
}

function latestIds(hub: FanOutHub, selection: Selection): Map<GameSlug, number> {
  return new Map(hub.latest(selection).map((d) => [d.round.game_slug, d.round.round_id]));
}

function latestTimes(hub: FanOutHub, selection: Selection): Map<GameSlug, number> {
  return new Map(hub.latest(selection).map((d) => [d.round.game_slug, d.appendedAt]));
}
