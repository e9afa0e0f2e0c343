/**
 * The SSE side of a subscription (lib/stream/subscriber.ts `StreamSink`): how rounds, lifecycle
 * messages and the resume verdict become SSE events, with the subscriber's position as each event's
 * id, and the guard on unsent bytes.
 *
 * better-sse writes with `res.write` and ignores its return value, so a client that stops reading
 * makes the response buffer grow without bound. Each write here first looks at the bytes still
 * queued for the socket and closes the stream past the limit; a catch-up pauses (`blocked`) from
 * half the limit until the socket drains.
 */
import type { ServerResponse } from 'node:http';
import { createEventBuffer, type EventBuffer, type Session } from 'better-sse';
import type { RecoveredInfo } from '../../../../lib/stream/envelope.ts';
import {
  type Delivery,
  type LifecycleEnvelopes,
  type Selection,
  selectionKey,
} from '../../../../lib/stream/hub.ts';
import type { LifecycleUpdate } from '../../../../lib/stream/lifecycle.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import type { RoundKind, StreamSink, StreamSubscription } from '../../../../lib/stream/subscriber.ts';

/**
 * Writes a field as `name: value`: the seed's wire form (`event: message`, `: heartbeat`).
 * better-sse writes `name:value`; SSE parsers drop one leading space, so both mean the same.
 * Values here are single-line (JSON text, ids, names).
 */
export const sanitizer = (text: string): string => ` ${text}`;
const identity = (data: unknown): string => String(data);

/** Built frames per delivery, shared by every subscriber with the same selection and id. */
const frames = new WeakMap<Delivery, Map<string, EventBuffer>>();
/** A live round's `message` frame per selection, with the selection's shared position as its id. */
const liveFrames = new WeakMap<Delivery, Map<string, Buffer>>();

/** The bytes of a live round's event for a subscriber standing at the selection's shared position. */
function liveFrameOf(d: Delivery, selection: Selection): Buffer {
  let m = liveFrames.get(d);
  if (!m) {
    m = new Map();
    liveFrames.set(d, m);
  }
  const key = selectionKey(selection);
  let f = m.get(key);
  if (!f) {
    f = Buffer.from(frameOf(d, 'message', selection, d.position(selection)).read());
    m.set(key, f);
  }
  return f;
}

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
  /** Send `event: recovered` once the catch-up is over (`envelope=1`). */
  readonly announceRecovery: boolean;
  readonly onDelivered: () => void;
  readonly onSlow: (buffered: number) => void;
  /** The catch-up could not read the log (the stream is ended; the client resumes from its id). */
  readonly onFailed: (err: Error) => void;
}

/** One SSE stream: the sink of its one subscription. */
export class SseSink implements StreamSink {
  private closed = false;

  constructor(
    private readonly session: Session,
    private readonly res: ServerResponse,
    private readonly hooks: SubscriberHooks,
  ) {}

  gone(): boolean {
    return this.closed || this.res.destroyed;
  }

  blocked(): boolean {
    return this.buffered() > this.hooks.limitBytes / 2;
  }

  /** A catch-up visit's events leave in one write (the response corked meanwhile). */
  batch(run: () => void): void {
    this.res.cork();
    try {
      run();
    } finally {
      this.res.uncork();
    }
  }

  /**
   * `initial` for the latest round sent on subscribe, `message` for every other round. A live
   * round whose subscriber stands where its selection's shared position does (the usual case)
   * is one write of bytes shared by every such stream: no allocation per subscriber here. A burst
   * leaves in one write per socket: Node's response corks its socket until the next tick.
   */
  round(d: Delivery, kind: RoundKind, sub: StreamSubscription): void {
    if (!this.writable()) return;
    const sel = sub.selection;
    if (kind === 'live' && sub.tracker.equals(d.livePosition(sel))) this.res.write(liveFrameOf(d, sel));
    else {
      const event = kind === 'initial' ? 'initial' : 'message';
      void this.session.batch(frameOf(d, event, sel, sub.tracker.text()));
    }
    this.hooks.onDelivered();
  }

  /**
   * `round-opened` / `betting-closed` with the lifecycle message as data and the subscriber's
   * position as id: the position of the last round delivered before it. An event must carry an
   * id: without one better-sse makes up a random one, which EventSource then sends back as its
   * Last-Event-ID, and a resume from it is impossible.
   */
  lifecycle(u: LifecycleUpdate, _envelopes: LifecycleEnvelopes, sub: StreamSubscription): void {
    if (!this.writable()) return;
    void this.session.push(u.json(), u.message.event, sub.positionText());
  }

  recovered(info: RecoveredInfo, sub: StreamSubscription): void {
    if (!this.hooks.announceRecovery || this.gone()) return;
    void this.session.push(JSON.stringify(info), 'recovered', sub.tracker.text());
  }

  overflow(): void {
    this.closeSlow();
  }

  failed(err: Error): void {
    this.hooks.onFailed(err);
    this.end();
  }

  /** Writes raw text (the heartbeat comment), under the same byte limit. */
  writeRaw(frame: EventBuffer): void {
    if (this.writable()) void this.session.batch(frame);
  }

  /** False when gone, or past the byte limit (then the stream is closed as slow). */
  private writable(): boolean {
    if (this.gone()) return false;
    if (this.buffered() <= this.hooks.limitBytes) return true;
    this.closeSlow();
    return false;
  }

  /** The client went away. */
  disconnected(): void {
    this.closed = true;
  }

  /** Ends the stream cleanly (shutdown drain, revocation); the client reconnects with its last id. */
  end(): void {
    this.closed = true;
    if (!this.res.destroyed) this.res.end();
  }

  private closeSlow(): void {
    if (this.closed) return;
    this.hooks.onSlow(this.buffered());
    this.closed = true;
    // destroy, not end: the queued bytes are dropped and their memory freed now.
    this.res.destroy();
  }

  /** Bytes written but not yet handed to the kernel. */
  private buffered(): number {
    return Math.max(this.res.writableLength, this.res.socket?.writableLength ?? 0);
  }
}
