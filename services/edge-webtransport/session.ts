/**
 * One open WebTransport session: its datagrams (live rounds, each one HTTP datagram, RFC 9297),
 * its reliable stream (reliable.ts: catch-ups, initial rounds and, with envelopes, every other
 * message), how it ends. What goes where is the sink's (sink.ts). Datagrams are unreliable and
 * unordered by design; a datagram that does not fit the path's size is not sent (the sink then
 * uses the reliable stream, or counts it dropped).
 */
import type { Delivery, Selection } from '../../lib/stream/hub.ts';
import { reportedType, selectionKey } from '../../lib/stream/hub.ts';
import { buildDatagram, CAPSULE, encodeTlv, FRAME, readTlv } from './h3/frames.ts';
import type { TlvReader } from './h3/reader.ts';
import { concatBytes, encodeVarint } from './h3/varint.ts';
import type { WtMetrics } from './metrics.ts';
import { PROTOCOL } from './metrics.ts';
import { ReliableStream } from './reliable.ts';

const encoder = new TextEncoder();
/** UTF-8 of a delivery's datagram text per wire form, shared by every session (encoded once). */
const payloads = new WeakMap<Delivery, Map<string, Uint8Array>>();

/** The datagram payload of `d` for a subscriber of `selection`: the stream form, or its live envelope. */
export function datagramPayload(d: Delivery, selection: Selection, envelope = false): Uint8Array {
  let byForm = payloads.get(d);
  if (!byForm) {
    byForm = new Map();
    payloads.set(d, byForm);
  }
  const key = envelope ? `e|${selectionKey(selection)}` : reportedType(selection, d.round);
  let bytes = byForm.get(key);
  if (!bytes) {
    bytes = encoder.encode(envelope ? d.envelope(selection) : d.streamJson(selection));
    byForm.set(key, bytes);
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

export class WtSession {
  private closed = false;
  /** Set while (and after) the server ends the session; settles once the connection is closed. */
  private serverClose: Promise<void> | undefined;
  /** The session's reliable stream, opened on first use. */
  readonly reliable: ReliableStream;

  constructor(
    private readonly conn: Deno.QuicConn,
    private readonly prefix: Uint8Array,
    private readonly connectWriter: WritableStreamDefaultWriter<Uint8Array>,
    private readonly metrics: WtMetrics,
    sessionId: number,
  ) {
    this.reliable = new ReliableStream(conn, sessionId);
  }

  /** True once the session ended (either side). */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Sends one datagram of `payload`.
   * @returns false when it does not fit the path's datagram size (nothing sent).
   */
  datagram(payload: Uint8Array): boolean {
    if (this.closed) return true;
    if (this.prefix.length + payload.length > this.conn.maxDatagramSize) return false;
    this.conn.sendDatagram(buildDatagram(this.prefix, payload)).then(
      () => this.metrics.deliveries.inc({ protocol: PROTOCOL }),
      () => this.metrics.datagramsDropped.inc({ reason: 'send_failed' }),
    );
    return true;
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
