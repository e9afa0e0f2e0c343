/**
 * One SSE subscriber: what it has been given (per-game positions, which become its event ids),
 * rounds held back while it starts or catches up, and the guard on unsent bytes.
 *
 * better-sse writes with `res.write` and ignores its return value, so a client that stops reading
 * makes the response buffer grow without bound. Each write here first looks at the bytes still
 * queued for the socket and closes the stream past the limit; catch-up writes (many at once)
 * wait for `drain` instead of racing ahead.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createEventBuffer, type EventBuffer, type Session } from 'better-sse';
import { type Delivery, type Selection, type Subscription, slugsOf } from '../../../../lib/stream/hub.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import { formatEventId, type Position } from './event-id.ts';

/** Rounds held for a subscriber that is not live yet, at most; more means it cannot keep up. */
const MAX_PENDING = 10_000;
/** How long a catch-up write waits for the socket to drain before giving up, ms. */
const DRAIN_WAIT_MS = 10_000;

/**
 * Writes a field as `name: value`: the seed's wire form (`event: message`, `: heartbeat`).
 * better-sse writes `name:value`; SSE parsers drop one leading space, so both mean the same.
 * Values here are single-line (JSON text, ids, names).
 */
export const sanitizer = (text: string): string => ` ${text}`;
const identity = (data: unknown): string => String(data);

/** Built frames per delivery, shared by every subscriber with the same selection and id. */
const frames = new WeakMap<Delivery, Map<string, EventBuffer>>();

function frameOf(d: Delivery, event: string, selection: Selection, id: string): EventBuffer {
  let m = frames.get(d);
  if (!m) {
    m = new Map();
    frames.set(d, m);
  }
  const key = `${event}|${selectionLabel(selection)}|${id}`;
  let f = m.get(key);
  if (!f) {
    f = createEventBuffer({ serializer: identity, sanitizer }).push(d.streamJson(selection), event, id);
    m.set(key, f);
  }
  return f;
}

export interface SubscriberHooks {
  readonly limitBytes: number;
  readonly onDelivered: () => void;
  readonly onSlow: (buffered: number) => void;
}

export class SseSubscriber implements Subscription {
  private pending: Delivery[] | null = [];
  private readonly last = new Map<GameSlug, { rid: number; at: number }>();
  private closed = false;

  /**
   * @param start positions already given: for a fresh subscriber the hub's latest round per game
   *   (sent as `initial` or older than the subscription), for a resume those of its Last-Event-ID.
   *   `start.t` stands for games without a position.
   */
  constructor(
    readonly selection: Selection,
    private readonly start: Position & { readonly at?: ReadonlyMap<GameSlug, number> },
    private readonly session: Session,
    private readonly res: ServerResponse,
    private readonly hooks: SubscriberHooks,
  ) {
    for (const [g, rid] of start.last) this.last.set(g, { rid, at: start.at?.get(g) ?? start.t });
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** The id of what has been given so far. */
  eventId(): string {
    let t = Number.POSITIVE_INFINITY;
    const last = new Map<GameSlug, number>();
    for (const g of slugsOf(this.selection)) {
      const p = this.last.get(g);
      t = Math.min(t, p ? p.at : this.start.t);
      if (p) last.set(g, p.rid);
    }
    return formatEventId(this.selection, { t: Number.isFinite(t) ? t : this.start.t, last });
  }

  deliver(d: Delivery): void {
    if (this.isClosed) return;
    if (this.pending) {
      this.pending.push(d);
      if (this.pending.length > MAX_PENDING) this.closeSlow();
      return;
    }
    this.send(d, 'message');
  }

  /**
   * Writes `d` as `event` unless it was given already (a `message` not newer than the last round
   * of its game); `initial` repeats the newest round on purpose. Closes past the byte limit.
   */
  send(d: Delivery, event: 'message' | 'initial'): void {
    if (this.isClosed) return;
    const g = d.round.game_slug;
    const prev = this.last.get(g);
    if (event === 'message' && prev && d.round.round_id <= prev.rid) return;
    if (this.buffered() > this.hooks.limitBytes) {
      this.closeSlow();
      return;
    }
    this.last.set(g, { rid: d.round.round_id, at: d.appendedAt });
    void this.session.batch(frameOf(d, event, this.selection, this.eventId()));
    this.hooks.onDelivered();
  }

  /** Writes `rounds` in order, waiting for the socket to drain between writes when it fills. */
  async catchUp(rounds: readonly Delivery[]): Promise<void> {
    for (const d of rounds) {
      if (this.isClosed) return;
      if (this.buffered() > this.hooks.limitBytes / 2) {
        const drained = await Promise.race([
          once(this.res, 'drain').then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), DRAIN_WAIT_MS).unref()),
          once(this.res, 'close').then(() => false),
        ]);
        if (!drained) {
          this.closeSlow();
          return;
        }
      }
      this.send(d, 'message');
    }
  }

  /** Sends what arrived while starting, then delivers live. */
  goLive(): void {
    const held = this.pending ?? [];
    this.pending = null;
    for (const d of held) this.send(d, 'message');
  }

  /** Writes raw text (the heartbeat comment), under the same byte limit. */
  writeRaw(frame: EventBuffer): void {
    if (this.isClosed) return;
    if (this.buffered() > this.hooks.limitBytes) this.closeSlow();
    else void this.session.batch(frame);
  }

  /** The client went away. */
  disconnected(): void {
    this.closed = true;
    this.pending = null;
  }

  /** Ends the stream cleanly (shutdown drain); the client reconnects with its last id. */
  end(): void {
    this.closed = true;
    if (!this.res.destroyed) this.res.end();
  }

  private closeSlow(): void {
    if (this.closed) return;
    this.hooks.onSlow(this.buffered());
    this.closed = true;
    this.pending = null;
    // destroy, not end: the queued bytes are dropped and their memory freed now.
    this.res.destroy();
  }

  /** Bytes written but not yet handed to the kernel. */
  private buffered(): number {
    return Math.max(this.res.writableLength, this.res.socket?.writableLength ?? 0);
  }
}
