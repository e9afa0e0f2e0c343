/**
 * One open WebTransport session as a hub subscriber: each round it is given becomes one HTTP
 * datagram (RFC 9297) holding the stream-form JSON of seed 000, nothing else is sent. Datagrams
 * are unreliable and unordered by design; a round that does not fit the path's datagram size is
 * dropped and counted (ours are about 250 bytes against a QUIC minimum of about 1,150).
 */
import type { Delivery, Selection, Subscription } from '../../lib/stream/hub.ts';
import { reportedType } from '../../lib/stream/hub.ts';
import { buildDatagram, CAPSULE, encodeTlv, FRAME, readTlv } from './h3/frames.ts';
import type { TlvReader } from './h3/reader.ts';
import { concatBytes, encodeVarint } from './h3/varint.ts';
import type { WtMetrics } from './metrics.ts';
import { PROTOCOL } from './metrics.ts';

const encoder = new TextEncoder();
/** UTF-8 of a delivery's stream form per reported type, shared by every session (encoded once). */
const payloads = new WeakMap<Delivery, Map<string, Uint8Array>>();

/** The datagram payload of `d` for a subscriber of `selection`. */
export function datagramPayload(d: Delivery, selection: Selection): Uint8Array {
  let byType = payloads.get(d);
  if (!byType) {
    byType = new Map();
    payloads.set(d, byType);
  }
  const type = reportedType(selection, d.round);
  let bytes = byType.get(type);
  if (!bytes) {
    bytes = encoder.encode(d.streamJson(selection));
    byType.set(type, bytes);
  }
  return bytes;
}

/** How a session ended. */
export interface SessionEnd {
  readonly code: number;
  readonly reason: string;
}

/** Largest capsule payload read from a client, bytes (a close reason is at most 1,024). */
const MAX_CAPSULE = 4096;

export class WtSession implements Subscription {
  private closed = false;
  /** Set while (and after) the server ends the session; settles once the connection is closed. */
  private serverClose: Promise<void> | undefined;

  constructor(
    readonly selection: Selection,
    private readonly conn: Deno.QuicConn,
    private readonly prefix: Uint8Array,
    private readonly connectWriter: WritableStreamDefaultWriter<Uint8Array>,
    private readonly metrics: WtMetrics,
  ) {}

  deliver(d: Delivery): void {
    if (this.closed) return;
    const payload = datagramPayload(d, this.selection);
    if (this.prefix.length + payload.length > this.conn.maxDatagramSize) {
      this.metrics.datagramsDropped.inc({ reason: 'too_large' });
      return;
    }
    this.conn.sendDatagram(buildDatagram(this.prefix, payload)).then(
      () => this.metrics.deliveries.inc({ protocol: PROTOCOL }),
      () => this.metrics.datagramsDropped.inc({ reason: 'send_failed' }),
    );
  }

  /**
   * Resolves when the client ends the session: a CLOSE_WEBTRANSPORT_SESSION capsule, the end or
   * reset of the CONNECT stream, or the connection closing. Capsules arrive in DATA frames
   * (RFC 9297 §3.2); other frames and capsule types are ignored.
   */
  async watch(reader: TlvReader): Promise<SessionEnd> {
    let capsules: Uint8Array = new Uint8Array(0);
    const byClient = (async (): Promise<SessionEnd> => {
      for (;;) {
        const frame = await reader.tlv().catch(() => undefined);
        if (!frame) return { code: 0, reason: 'CONNECT stream ended' };
        if (frame.type !== FRAME.DATA) continue;
        capsules = concatBytes(capsules, frame.payload);
        for (;;) {
          const c = readTlv(capsules, 0, MAX_CAPSULE);
          if (!c) break;
          capsules = capsules.subarray(c.next);
          if (c.type === CAPSULE.CLOSE_WEBTRANSPORT_SESSION && c.payload.length >= 4) {
            const code = new DataView(c.payload.buffer, c.payload.byteOffset, 4).getUint32(0);
            return { code, reason: new TextDecoder().decode(c.payload.subarray(4)) };
          }
        }
      }
    })().catch(() => ({ code: 0, reason: 'CONNECT stream failed' }));
    const byConnection = this.conn.closed.then(
      (info) => ({ code: info.closeCode, reason: info.reason || 'connection closed' }),
      () => ({ code: 0, reason: 'connection lost' }),
    );
    return Promise.race([byClient, byConnection]);
  }

  /**
   * Ends the session from the server: a CLOSE_WEBTRANSPORT_SESSION capsule with `code` and
   * `reason` (the browser's `closed` promise reports them), the end of the CONNECT stream, and
   * the connection closed after `graceMs` so both are delivered first. Idempotent; resolves once
   * the connection is closed. A client that got the capsule answers with its own FIN and closes the
   * connection itself, so the grace only runs out for one that is slow or gone.
   */
  close(code: number, reason: string, graceMs = 2000): Promise<void> {
    if (this.closed) return this.serverClose ?? Promise.resolve();
    this.closed = true;
    this.serverClose = this.sendClose(code, reason, graceMs);
    return this.serverClose;
  }

  /**
   * The server-side end of a session (see close()), or undefined when the server has not ended it.
   * The caller that sees the client's FIN afterwards must leave the connection to this promise:
   * closing it at once can drop the server's own FIN still in flight, and Chromium then reports
   * "Connection lost" instead of the close code.
   */
  get closingByServer(): Promise<void> | undefined {
    return this.serverClose;
  }

  private async sendClose(code: number, reason: string, graceMs: number): Promise<void> {
    const text = encoder.encode(reason).subarray(0, 1024);
    const payload = new Uint8Array(4 + text.length);
    new DataView(payload.buffer).setUint32(0, code);
    payload.set(text, 4);
    const capsule = concatBytes(
      encodeVarint(CAPSULE.CLOSE_WEBTRANSPORT_SESSION),
      encodeVarint(payload.length),
      payload,
    );
    try {
      await this.connectWriter.write(encodeTlv(FRAME.DATA, capsule));
      await this.connectWriter.close();
    } catch {
      // the client already went away
    }
    await Promise.race([this.conn.closed.catch(() => {}), new Promise((r) => setTimeout(r, graceMs))]);
    try {
      this.conn.close({ closeCode: 0x100, reason });
    } catch {
      // already closed
    }
  }

  /** Marks the session ended by the client; later deliveries are ignored. */
  markClosed(): void {
    this.closed = true;
  }
}
