/**
 * The gRPC side of a subscription (lib/stream/subscriber.ts `StreamSink`), over the slow-consumer
 * guard of stream.ts. Two wire forms:
 *
 * - StreamByGame/StreamByType/StreamAll: `Round` messages, exactly as before unless the request
 *   asked for positions (`positions` or `since`), then with `Round.position` set.
 * - StreamRoundEvents: `RoundEvent` messages, the envelope protocol as protobuf.
 *
 * A live round's bytes are encoded once per selection and shared by every stream (the position of
 * a live round is the same for every live subscriber of a selection); a replayed or initial round
 * carries its subscriber's own position, so it is encoded per message (catch-ups are rate-bounded).
 */
import { status } from '@grpc/grpc-js';
import type { RecoveredInfo } from '../../../../lib/stream/envelope.ts';
import {
  type Delivery,
  type LifecycleEnvelopes,
  type Selection,
  selectionKey,
} from '../../../../lib/stream/hub.ts';
import type { LifecycleMessage, LifecycleUpdate } from '../../../../lib/stream/lifecycle.ts';
import type { RoundKind, StreamSink, StreamSubscription } from '../../../../lib/stream/subscriber.ts';
import { passes, type RoundFilter } from './filter.ts';
import { encodeRoundEventMsg, encodeRoundMsg, type LifecycleMsg, type RoundEventMsg } from './proto.ts';
import { encodedRound, type GrpcStreamSubscription } from './stream.ts';

/** Which messages a call gets. */
export type GrpcWireForm = 'rounds' | 'positioned-rounds' | 'events';

/** Bytes of live rounds per delivery, by wire form, then selection (shared by every stream). */
const live = {
  'positioned-rounds': new WeakMap<Delivery, Map<string, Buffer>>(),
  events: new WeakMap<Delivery, Map<string, Buffer>>(),
};

function liveBytes(d: Delivery, selection: Selection, form: 'positioned-rounds' | 'events'): Buffer {
  let m = live[form].get(d);
  if (!m) {
    m = new Map();
    live[form].set(d, m);
  }
  const key = selectionKey(selection);
  let b = m.get(key);
  if (!b) {
    const position = d.position(selection);
    b =
      form === 'events'
        ? encodeRoundEventMsg({
            type: 'round',
            position,
            round: d.streamForm(selection),
            ...(d.prevRoundId === null ? {} : { prev: d.prevRoundId }),
          })
        : encodeRoundMsg({ ...d.streamForm(selection), position });
    m.set(key, b);
  }
  return b;
}

/** The protobuf shape of a lifecycle message. */
export function lifecycleMsg(m: LifecycleMessage): LifecycleMsg {
  return { ...m };
}

export class GrpcSink implements StreamSink {
  constructor(
    private readonly guard: GrpcStreamSubscription,
    private readonly form: GrpcWireForm,
    private readonly filter: RoundFilter,
    private readonly maxBufferBytes: number,
  ) {}

  round(d: Delivery, kind: RoundKind, sub: StreamSubscription): void {
    if (!passes(this.filter, d.round)) return;
    this.guard.write(this.bytesOf(d, kind, sub), true);
  }

  private bytesOf(d: Delivery, kind: RoundKind, sub: StreamSubscription): Buffer {
    const sel = sub.selection;
    if (this.form === 'rounds') return encodedRound(d, sel);
    if (kind === 'live') return liveBytes(d, sel, this.form);
    const position = sub.tracker.text();
    if (this.form !== 'events') return encodeRoundMsg({ ...d.streamForm(sel), position });
    const mark = kind === 'initial' ? { initial: true } : { replay: true };
    return encodeRoundEventMsg({ type: 'round', position, round: d.streamForm(sel), ...mark });
  }

  lifecycle(u: LifecycleUpdate, _e: LifecycleEnvelopes, sub: StreamSubscription): void {
    if (this.form !== 'events') return;
    this.event({ type: 'lifecycle', position: sub.tracker.text(), lifecycle: lifecycleMsg(u.message) });
  }

  recovered(info: RecoveredInfo, sub: StreamSubscription): void {
    if (this.form !== 'events') return;
    this.event({
      type: 'recovered',
      position: sub.tracker.text(),
      recovered: {
        recovered: info.recovered,
        since: info.since ?? '',
        replayed: info.replayed,
        reason: info.reason ?? '',
      },
    });
  }

  /** A `heartbeat` event with the subscription's position (StreamRoundEvents only). */
  heartbeat(sub: StreamSubscription): void {
    if (this.form === 'events' && sub.live) this.event({ type: 'heartbeat', position: sub.tracker.text() });
  }

  blocked(): boolean {
    return this.guard.pendingBytes > this.maxBufferBytes / 2;
  }

  gone(): boolean {
    return this.guard.isClosed;
  }

  overflow(): void {
    this.guard.endSlow();
  }

  failed(err: Error): void {
    this.guard.end({ code: status.UNAVAILABLE, details: `resume failed: ${err.message}` });
  }

  private event(e: RoundEventMsg): void {
    this.guard.write(encodeRoundEventMsg(e), false);
  }
}
