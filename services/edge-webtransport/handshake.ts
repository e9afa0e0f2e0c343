/**
 * The server side of opening a WebTransport session over one QUIC connection (RFC 9114 control
 * streams, RFC 9220 extended CONNECT, draft-ietf-webtrans-http3): exchange SETTINGS, read the
 * CONNECT request, let the caller decide, and answer 200 (session open) or a refusal status.
 *
 * Written here instead of calling `Deno.upgradeWebTransport`, which answers 200 to any request
 * before its URL is known; see h3/connect.ts. Runs on Deno (`Deno.QuicConn`, `--unstable-net`).
 */
import { WebTransportError } from './errors.ts';
import { type ConnectRequest, decodeConnectRequest, encodeConnectResponse } from './h3/connect.ts';
import {
  datagramPrefix,
  decodeSettings,
  FRAME,
  peerSupportsWebTransport,
  STREAM,
  serverControlStreamPreamble,
} from './h3/frames.ts';
import { TlvReader } from './h3/reader.ts';

/** Largest HEADERS or SETTINGS payload read before the session exists, bytes. */
const MAX_HANDSHAKE_FRAME = 16 * 1024;
/** HTTP/3 error codes (RFC 9114 §8.1) used to close a connection. */
export const H3_NO_ERROR = 0x100;
export const H3_GENERAL_PROTOCOL_ERROR = 0x101;

/** The caller's verdict on a CONNECT request. */
export type Verdict = { readonly status: 200 } | { readonly status: number; readonly error: string };

export type HandshakeResult =
  | {
      readonly kind: 'accepted';
      readonly request: ConnectRequest;
      /** Reader of the CONNECT stream after the request; its end (or a close capsule) ends the session. */
      readonly connectReader: TlvReader;
      /** Writer of the CONNECT stream, after the 200 response (for the server's close capsule). */
      readonly connectWriter: WritableStreamDefaultWriter<Uint8Array>;
      /** Prefix of the session's datagrams (its quarter stream id). */
      readonly datagramPrefix: Uint8Array;
      /** The session id: the CONNECT stream's id (the header of its WebTransport streams). */
      readonly sessionId: number;
      /** The client's WebTransport unidirectional streams (envelope commands). */
      readonly peerStreams: PeerWtStreams;
      /** Streams that must stay referenced while the connection lives (closing them is a connection error). */
      readonly keep: readonly unknown[];
    }
  | { readonly kind: 'refused'; readonly status: number; readonly error: string; readonly path?: string };

/**
 * The client's WebTransport unidirectional streams (type 0x54 and a session id), read past their
 * header, held until the session takes them (at most `MAX_HELD`; more are refused).
 */
export class PeerWtStreams {
  private static readonly MAX_HELD = 4;
  private handler: ((sessionId: number, r: TlvReader) => void) | undefined;
  private readonly held: [number, TlvReader][] = [];

  add(sessionId: number, r: TlvReader): void {
    if (this.handler) this.handler(sessionId, r);
    else if (this.held.length < PeerWtStreams.MAX_HELD) this.held.push([sessionId, r]);
    else void r.cancel();
  }

  /** From now on every stream goes to `handler` (those held first). */
  take(handler: (sessionId: number, r: TlvReader) => void): void {
    this.handler = handler;
    for (const [id, r] of this.held.splice(0)) handler(id, r);
  }
}

/** A handshake that failed before a response could be sent. */
export class HandshakeError extends WebTransportError {
  declare readonly code: 'HANDSHAKE_FAILED';

  constructor(
    message: string,
    /** `timeout`: no complete CONNECT request in time; `protocol`: the peer broke HTTP/3. */
    readonly reason: 'timeout' | 'protocol' = 'protocol',
  ) {
    super('HANDSHAKE_FAILED', message);
  }
}

/**
 * Runs the handshake on an accepted connection. Resolves once the response is written; on a
 * refusal the CONNECT stream is finished and the caller closes the connection after a grace period.
 * @param decide maps the request to a verdict (called once; may be async, e.g. a credential check).
 * @throws HandshakeError on timeout (`timeoutMs`) or when the peer breaks the protocol.
 */
export async function acceptWebTransport(
  conn: Deno.QuicConn,
  decide: (request: ConnectRequest) => Verdict | Promise<Verdict>,
  timeoutMs: number,
): Promise<HandshakeResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HandshakeError(`no CONNECT request within ${timeoutMs} ms`, 'timeout')),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([handshake(conn, decide), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function handshake(
  conn: Deno.QuicConn,
  decide: (request: ConnectRequest) => Verdict | Promise<Verdict>,
): Promise<HandshakeResult> {
  const control = await conn.createUnidirectionalStream();
  const controlWriter = control.getWriter();
  await controlWriter.write(serverControlStreamPreamble(1));
  const keep: unknown[] = [control, controlWriter];
  const peerStreams = new PeerWtStreams();
  const peerSettings = readPeerStreams(conn, keep, peerStreams);

  const bidi = await conn.incomingBidirectionalStreams.getReader().read();
  if (bidi.done) throw new HandshakeError('connection closed before a CONNECT request');
  const connect = bidi.value;
  const reader = new TlvReader(connect.readable.getReader(), MAX_HANDSHAKE_FRAME);
  let headers: Uint8Array | undefined;
  while (!headers) {
    const frame = await reader.tlv().catch((err: Error) => {
      throw new HandshakeError(`bad request stream: ${err.message}`);
    });
    if (!frame) throw new HandshakeError('request stream ended before HEADERS');
    if (frame.type === FRAME.HEADERS) headers = frame.payload;
    else if (frame.type === FRAME.DATA) throw new HandshakeError('DATA before HEADERS');
    // Other (unknown, reserved) frame types are ignored (RFC 9114 §9).
  }

  const writer = connect.writable.getWriter();
  const refuse = async (status: number, error: string, path?: string): Promise<HandshakeResult> => {
    await writer.write(encodeConnectResponse(status, error));
    await writer.close().catch(() => {});
    await reader.cancel();
    return { kind: 'refused', status, error, path };
  };

  let parsed: ReturnType<typeof decodeConnectRequest>;
  try {
    parsed = decodeConnectRequest(headers);
  } catch (err) {
    return refuse(400, `Malformed request headers: ${(err as Error).message}`);
  }
  if (!parsed.ok) return refuse(parsed.status, parsed.error);
  const settings = await peerSettings;
  if (!peerSupportsWebTransport(settings)) {
    return refuse(400, 'The client did not enable WebTransport with HTTP datagrams', parsed.request.path);
  }
  const verdict = await decide(parsed.request);
  if (verdict.status !== 200) {
    return refuse(verdict.status, 'error' in verdict ? verdict.error : 'Refused', parsed.request.path);
  }
  await writer.write(encodeConnectResponse(200));
  keep.push(reader);
  return {
    kind: 'accepted',
    request: parsed.request,
    connectReader: reader,
    connectWriter: writer,
    datagramPrefix: datagramPrefix(Number(connect.writable.id)),
    sessionId: Number(connect.writable.id),
    peerStreams,
    keep,
  };
}

/**
 * Reads the client's unidirectional streams for the connection's lifetime: the control stream
 * (its SETTINGS resolve the returned promise; the rest is drained), the QPACK encoder and
 * decoder streams (held open and drained; with a table capacity of 0 they carry nothing of use),
 * WebTransport streams (handed to `wt` past their header), and refuses any other stream.
 */
function readPeerStreams(
  conn: Deno.QuicConn,
  keep: unknown[],
  wt: PeerWtStreams,
): Promise<Map<number, number>> {
  const { promise, resolve, reject } = Promise.withResolvers<Map<number, number>>();
  const streams = conn.incomingUnidirectionalStreams.getReader();
  /** Critical stream types already open; RFC 9114 §6.2.1 and RFC 9204 §4.2 allow one of each. */
  const open = new Set<number>();
  // Each stream is read on its own, so a stream that never sends its type blocks nothing else.
  const handle = async (stream: ReadableStream<Uint8Array>) => {
    const r = new TlvReader(stream.getReader(), MAX_HANDSHAKE_FRAME);
    const type = await r.varint().catch(() => undefined);
    if (type === STREAM.WEBTRANSPORT) {
      const session = await r.varint().catch(() => undefined);
      if (session === undefined) await r.cancel();
      else wt.add(session, r);
      return;
    }
    const critical =
      type === STREAM.CONTROL || type === STREAM.QPACK_ENCODER || type === STREAM.QPACK_DECODER;
    if (type === undefined || !critical || open.has(type)) {
      await r.cancel(); // unknown, reserved or repeated
      return;
    }
    open.add(type);
    keep.push(stream, r);
    if (type === STREAM.CONTROL) {
      const first = await r.tlv().catch(() => undefined);
      if (first?.type !== FRAME.SETTINGS) {
        reject(new HandshakeError('control stream does not start with SETTINGS'));
        return;
      }
      resolve(decodeSettings(first.payload));
    }
    await r.discardAll();
  };
  (async () => {
    for (;;) {
      const { value: stream, done } = await streams.read();
      if (done) break;
      void handle(stream).catch((err) =>
        reject(new HandshakeError(`peer stream: ${(err as Error).message}`)),
      );
    }
    reject(new HandshakeError('connection closed before SETTINGS'));
  })().catch((err) => reject(new HandshakeError(`peer streams: ${(err as Error).message}`)));
  // A rejection after the handshake finished must not become an unhandled rejection.
  promise.catch(() => {});
  return promise;
}
