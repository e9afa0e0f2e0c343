/**
 * One gRPC server stream as a hub subscriber, with the slow-consumer guard ("a client
 * that connects and never reads: closed at the buffer limit, other subscribers unaffected").
 *
 * grpc-js queues every `write` in the call's object-mode buffer until HTTP/2 flow control lets
 * it out; `write()` returning false does not stop anything, and `writableLength` counts
 * messages, not bytes. So the subscription counts the bytes it handed over and not yet flushed
 * (each write's callback fires once its frame is written) and, past the limit, stops feeding
 * the call and ends it with RESOURCE_EXHAUSTED. A status cannot overtake the queued data (trailers
 * follow it), so the HTTP/2 stream is reset with ENHANCE_YOUR_CALM, which gRPC clients report as
 * RESOURCE_EXHAUSTED (grpc/grpc doc/PROTOCOL-HTTP2.md, "Errors"); that frees the queue at once.
 */
import { constants as http2 } from 'node:http2';
import { type StatusObject, status } from '@grpc/grpc-js';
import type { Delivery, Selection, Subscription } from '../../../../lib/stream/hub.ts';
import type { StreamRound } from '../../../../rules/rounds/round.ts';
import { passes, type RoundFilter } from './filter.ts';
import { encodeRoundMsg } from './proto.ts';

/** gRPC's length-prefixed message framing: 1 flag byte + 4 length bytes per message. */
const FRAME_PREFIX_BYTES = 5;

export const OVERFLOW_DETAILS = 'subscriber too slow: buffer limit exceeded';

/** What the guard needs of a grpc-js `ServerWritableStream` (a fake in unit tests). */
export interface StreamCall {
  write(chunk: Buffer, callback: (err?: Error | null) => void): boolean;
  emit(event: 'error', err: Partial<StatusObject>): boolean;
}

export interface GrpcStreamOptions {
  readonly selection: Selection;
  readonly filter: RoundFilter;
  /** Unflushed bytes (frames included) above which the stream is ended. */
  readonly maxBufferBytes: number;
  /** After each written round (metrics). */
  readonly onDelivered: () => void;
  /** Once, when the limit is passed, before the stream is reset; `pendingBytes` at that moment. */
  readonly onOverflow: (pendingBytes: number) => void;
  /** Resets the call's HTTP/2 stream; false when it could not (defaults to {@link resetHttp2Stream}). */
  readonly reset?: (call: StreamCall, code: number) => boolean;
}

/** Protobuf bytes per stream form; the form objects are cached per delivery and wire type. */
const encoded = new WeakMap<StreamRound, Buffer>();

/** The `Round` bytes of `d` as `selection` sees it, encoded once however many streams send it. */
export function encodedRound(d: Delivery, selection: Selection): Buffer {
  const form = d.streamForm(selection);
  let buf = encoded.get(form);
  if (!buf) {
    buf = encodeRoundMsg(form);
    encoded.set(form, buf);
  }
  return buf;
}

/**
 * Resets the HTTP/2 stream under a grpc-js server call with `code`. grpc-js has no public way to
 * abort a call with an RST_STREAM code, so this reaches `call.call.stream` (grpc-js 1.14's
 * BaseServerInterceptingCall when the server has no interceptors); the shape is checked, and
 * false is returned when it does not match, so the caller can fall back to a plain status.
 */
export function resetHttp2Stream(call: StreamCall, code: number): boolean {
  const stream = (call as { call?: { stream?: { close?: unknown; closed?: boolean } } }).call?.stream;
  if (!stream || typeof stream.close !== 'function') return false;
  if (!stream.closed) (stream.close as (code: number) => void)(code);
  return true;
}

/** A hub subscriber writing each passing round to one gRPC stream. */
export class GrpcStreamSubscription implements Subscription {
  readonly selection: Selection;
  private pending = 0;
  private closed = false;
  /** Sizes of the writes not yet flushed, oldest first (grpc-js calls back in write order). */
  private readonly unflushed: number[] = [];
  private readonly flushed = () => {
    this.pending -= this.unflushed.shift() ?? 0;
  };

  constructor(
    private readonly call: StreamCall,
    private readonly opts: GrpcStreamOptions,
  ) {
    this.selection = opts.selection;
  }

  /** Bytes written to the call and not yet flushed to the connection. */
  get pendingBytes(): number {
    return this.pending;
  }

  /** True once the stream was ended by the guard or by `end`. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes `d` as a plain `Round` when it passes the filter. */
  deliver(d: Delivery): void {
    if (this.closed || !passes(this.opts.filter, d.round)) return;
    this.write(encodedRound(d, this.selection), true);
  }

  /**
   * Writes one message's bytes under the guard; past the limit the stream is ended.
   * @param round whether it is a round (counted by `onDelivered`).
   */
  write(buf: Buffer, round: boolean): void {
    if (this.closed) return;
    const size = buf.length + FRAME_PREFIX_BYTES;
    this.pending += size;
    this.unflushed.push(size);
    this.call.write(buf, this.flushed);
    if (round) this.opts.onDelivered();
    if (this.pending > this.opts.maxBufferBytes) this.overflow();
  }

  /** Ends the stream as too slow now (too many rounds held while it catches up). */
  endSlow(): void {
    if (!this.closed) this.overflow();
  }

  /** Ends the stream with `status` after what is queued (shutdown: UNAVAILABLE, so clients reconnect). */
  end(s: Pick<StatusObject, 'code' | 'details'>): void {
    if (this.closed) return;
    this.closed = true;
    this.call.emit('error', s);
  }

  private overflow(): void {
    this.closed = true;
    this.opts.onOverflow(this.pending);
    const reset = this.opts.reset ?? resetHttp2Stream;
    if (!reset(this.call, http2.NGHTTP2_ENHANCE_YOUR_CALM)) {
      // The status then follows the queued data: memory stays bounded, as nothing more is written.
      this.call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: OVERFLOW_DETAILS });
    }
  }
}
