/**
 * The WebTransport side of a subscription (lib/stream/subscriber.ts `StreamSink`):
 * live rounds go out as datagrams; everything that must arrive — a catch-up's rounds, the latest
 * rounds on subscribe, and with envelopes the `recovered`, `lifecycle`, `heartbeat` and `error`
 * messages — goes on the session's reliable stream, one JSON text per line.
 *
 * Without envelopes (the seed's form) a datagram is a stream-form round and the reliable stream is
 * only opened for `since` or `latest=1`: it carries stream-form lines, for `since` then one last
 * line with the resume's verdict (`{recovered, since, replayed, reason?}`: no `round_id`, so it is
 * told from a round), and ends (FIN). Deno's QUIC streams cannot be reset (dropping one finishes
 * it), so the verdict is a line rather than a reset.
 * With envelopes a datagram is a `round` envelope with `prev` (the previous round id of its game),
 * so a client sees a lost datagram and resubscribes from its position.
 */
import type { RecoveredInfo } from '../../lib/stream/envelope.ts';
import { recoveredEnvelope, roundEnvelope } from '../../lib/stream/envelope.ts';
import type { Delivery, LifecycleEnvelopes } from '../../lib/stream/hub.ts';
import type { LifecycleUpdate } from '../../lib/stream/lifecycle.ts';
import { selectionLabel } from '../../lib/stream/selection.ts';
import type { RoundKind, StreamSink, StreamSubscription } from '../../lib/stream/subscriber.ts';
import type { WtMetrics } from './metrics.ts';
import { datagramPayload, type WtSession } from './session.ts';

/** Unsent bytes of the reliable stream from which a catch-up waits. */
export const CATCH_UP_LIMIT_BYTES = 256 * 1024;
/** Close code of a session too slow to take its catch-up (mirrors WebSocket 1008). */
export const SLOW = 1008;

export interface WtSinkHooks {
  readonly metrics: WtMetrics;
  /** A subscription's catch-up could not read the log. */
  resumeFailed(sub: StreamSubscription, err: Error): void;
}

export class WtSink implements StreamSink {
  constructor(
    private readonly session: WtSession,
    private readonly envelope: boolean,
    private readonly hooks: WtSinkHooks,
  ) {}

  round(d: Delivery, kind: RoundKind, sub: StreamSubscription): void {
    const sel = sub.selection;
    if (kind === 'live') {
      if (this.session.datagram(datagramPayload(d, sel, this.envelope))) return;
      // Too large for a datagram: an envelope client still needs it, a plain one never got such.
      if (this.envelope) this.session.reliable.line(d.envelope(sel));
      else this.hooks.metrics.datagramsDropped.inc({ reason: 'too_large' });
      return;
    }
    const marks = kind === 'initial' ? { initial: true } : { replay: true };
    this.session.reliable.line(
      this.envelope
        ? roundEnvelope(selectionLabel(sel), sub.tracker.text(), d.streamJson(sel), marks)
        : d.streamJson(sel),
    );
  }

  lifecycle(_u: LifecycleUpdate, envelopes: LifecycleEnvelopes, sub: StreamSubscription): void {
    if (this.envelope) this.session.reliable.line(envelopes.for(sub.selection));
  }

  recovered(info: RecoveredInfo, sub: StreamSubscription): void {
    const r = this.session.reliable;
    if (this.envelope) r.line(recoveredEnvelope(selectionLabel(sub.selection), sub.tracker.text(), info));
    else if (info.since !== null) {
      r.line(JSON.stringify(info));
      void r.finish();
    } else if (r.opened) void r.finish();
  }

  blocked(): boolean {
    return this.session.reliable.pendingBytes > CATCH_UP_LIMIT_BYTES;
  }

  gone(): boolean {
    return this.session.isClosed;
  }

  overflow(): void {
    void this.session.close(SLOW, 'slow consumer');
  }

  failed(err: Error, sub: StreamSubscription): void {
    this.hooks.resumeFailed(sub, err);
  }
}
