/**
 * The WebSocket side of a subscription (lib/stream/subscriber.ts `StreamSink`): one text frame per
 * message. Without the envelope opt-in a frame is a round in the seed's stream form and nothing
 * else is ever sent; with it, every message is an envelope (lib/stream/envelope.ts). A live round's
 * frame text is built once per selection and shared by every socket (Delivery.envelope).
 *
 * Once live, the subscription joins its uWebSockets.js topic (lib/stream/shared.ts: the stream
 * form or the envelope of its selection, plus its lifecycle envelopes when asked), and uWS's C++
 * writes each live round to every socket of the topic; `round` then only sees catch-up, held and
 * `latest` rounds.
 */
import type { RecoveredInfo } from '../../../../lib/stream/envelope.ts';
import { recoveredEnvelope, roundEnvelope } from '../../../../lib/stream/envelope.ts';
import type { Delivery, LifecycleEnvelopes } from '../../../../lib/stream/hub.ts';
import type { LifecycleUpdate } from '../../../../lib/stream/lifecycle.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import { type SharedTopics, topicOf } from '../../../../lib/stream/shared.ts';
import type { RoundKind, StreamSink, StreamSubscription } from '../../../../lib/stream/subscriber.ts';

/** What a sink needs of its socket (ws.ts). */
export interface WsLink {
  /** Sends one text frame; closes the socket as slow past the buffer limit. */
  send(text: string): void;
  /** Counts a round written (edge_deliveries_total). */
  delivered(): void;
  /** Runs `run` with the socket corked: its sends leave in one write. */
  cork(run: () => void): void;
  /** Unsent bytes of the socket. */
  buffered(): number;
  readonly closed: boolean;
  /** Ends the socket as slow (too many rounds held while catching up). */
  closeSlow(): void;
  /** A subscription's catch-up could not read the log. */
  resumeFailed(sub: StreamSubscription, err: Error): void;
  /** The transport's topics. */
  readonly topics: SharedTopics;
  /** Subscribes the socket to `topic`; false when it is closed. */
  join(topic: string): boolean;
  /** Unsubscribes the socket from `topic` (nothing when closed). */
  leave(topic: string): void;
  /** The subscription is on its topic (called once, after joinShared succeeded). */
  joined(): void;
}

export class WsSink implements StreamSink {
  constructor(
    private readonly link: WsLink,
    private readonly envelope: boolean,
    /** Unsent bytes from which a catch-up pauses (half the socket's limit). */
    private readonly catchUpLimit: number,
  ) {}

  round(d: Delivery, kind: RoundKind, sub: StreamSubscription): void {
    const sel = sub.selection;
    if (!this.envelope) this.link.send(d.streamJson(sel));
    else if (kind === 'live') this.link.send(d.envelope(sel));
    else {
      const marks = kind === 'initial' ? { initial: true } : { replay: true };
      this.link.send(roundEnvelope(selectionLabel(sel), sub.tracker.text(), d.streamJson(sel), marks));
    }
    this.link.delivered();
  }

  lifecycle(_u: LifecycleUpdate, envelopes: LifecycleEnvelopes, sub: StreamSubscription): void {
    if (this.envelope) this.link.send(envelopes.for(sub.selection));
  }

  recovered(info: RecoveredInfo, sub: StreamSubscription): void {
    if (this.envelope)
      this.link.send(recoveredEnvelope(selectionLabel(sub.selection), sub.tracker.text(), info));
  }

  joinShared(sub: StreamSubscription, lifecycle: boolean): boolean {
    const { topics } = this.link;
    if (!this.link.join(topics.topic(sub.selection, this.envelope ? 'envelope' : 'json'))) return false;
    if (lifecycle) this.link.join(topics.topic(sub.selection, 'lifecycle'));
    this.link.joined();
    return true;
  }

  leaveShared(sub: StreamSubscription): void {
    this.link.leave(topicOf(sub.selection, this.envelope ? 'envelope' : 'json'));
    this.link.leave(topicOf(sub.selection, 'lifecycle'));
  }

  blocked(): boolean {
    return this.link.buffered() > this.catchUpLimit;
  }

  batch(run: () => void): void {
    this.link.cork(run);
  }

  gone(): boolean {
    return this.link.closed;
  }

  overflow(): void {
    this.link.closeSlow();
  }

  failed(err: Error, sub: StreamSubscription): void {
    this.link.resumeFailed(sub, err);
  }
}
