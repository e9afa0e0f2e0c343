/**
 * The HTTP/3 pieces a WebTransport server needs (RFC 9114, RFC 9297, RFC 9220 and
 * draft-ietf-webtrans-http3): frames, stream types, SETTINGS and the session-close capsule.
 */
import { WebTransportError } from '../errors.ts';
import { concatBytes, encodeVarint, readVarint } from './varint.ts';

/** Frame types (RFC 9114 §7.2). */
export const FRAME = { DATA: 0x00, HEADERS: 0x01, SETTINGS: 0x04, GOAWAY: 0x07 } as const;

/** Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2, draft-ietf-webtrans-http3 §4.2). */
export const STREAM = {
  CONTROL: 0x00,
  QPACK_ENCODER: 0x02,
  QPACK_DECODER: 0x03,
  WEBTRANSPORT: 0x54,
} as const;

/** Setting identifiers. The draft-era ids stay because shipping Chrome still sends and checks them. */
export const SETTING = {
  QPACK_MAX_TABLE_CAPACITY: 0x01,
  QPACK_BLOCKED_STREAMS: 0x07,
  ENABLE_CONNECT_PROTOCOL: 0x08, // RFC 8441 / RFC 9220
  H3_DATAGRAM: 0x33, // RFC 9297
  H3_DATAGRAM_DRAFT04: 0xffd277,
  ENABLE_WEBTRANSPORT_DRAFT02: 0x2b603742,
  WEBTRANSPORT_MAX_SESSIONS_DRAFT: 0x2b603743,
  WEBTRANSPORT_MAX_SESSIONS: 0xc671706a,
} as const;

/** Capsule types on the CONNECT stream (draft-ietf-webtrans-http3 §5). */
export const CAPSULE = { CLOSE_WEBTRANSPORT_SESSION: 0x2843, DRAIN_WEBTRANSPORT_SESSION: 0x78ae } as const;

/** A frame, capsule or settings block that does not parse. */
export class FrameError extends WebTransportError {
  declare readonly code: 'H3_FRAME_INVALID';

  constructor(message: string) {
    super('H3_FRAME_INVALID', message);
  }
}

/** One frame (or capsule: same type-length-value layout) read from a buffer. */
export interface Tlv {
  readonly type: number;
  readonly payload: Uint8Array;
  /** Offset just after the frame. */
  readonly next: number;
}

/**
 * Reads one type-length-value unit (an HTTP/3 frame or a capsule) at `offset`.
 * @returns undefined when `buf` does not yet hold all of it.
 * @throws FrameError when the declared length exceeds `maxPayload` bytes.
 */
export function readTlv(buf: Uint8Array, offset: number, maxPayload: number): Tlv | undefined {
  const type = readVarint(buf, offset);
  if (!type) return undefined;
  const len = readVarint(buf, type.next);
  if (!len) return undefined;
  if (len.value > maxPayload) throw new FrameError(`frame of ${len.value} bytes exceeds ${maxPayload}`);
  const end = len.next + len.value;
  if (end > buf.length) return undefined;
  return { type: type.value, payload: buf.subarray(len.next, end), next: end };
}

/** `type`, length, payload. */
export function encodeTlv(type: number, payload: Uint8Array): Uint8Array {
  return concatBytes(encodeVarint(type), encodeVarint(payload.length), payload);
}

/** The payload of a SETTINGS frame as id → value. @throws FrameError when truncated or repeated. */
export function decodeSettings(payload: Uint8Array): Map<number, number> {
  const out = new Map<number, number>();
  let pos = 0;
  while (pos < payload.length) {
    const id = readVarint(payload, pos);
    const value = id && readVarint(payload, id.next);
    if (!id || !value) throw new FrameError('truncated SETTINGS frame');
    if (out.has(id.value)) throw new FrameError(`setting ${id.value} repeated`); // RFC 9114 §7.2.4
    out.set(id.value, value.value);
    pos = value.next;
  }
  return out;
}

/** A SETTINGS frame for `settings`. */
export function encodeSettingsFrame(settings: ReadonlyMap<number, number>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [id, value] of settings) parts.push(encodeVarint(id), encodeVarint(value));
  return encodeTlv(FRAME.SETTINGS, concatBytes(...parts));
}

/**
 * The start of this server's control stream: the stream type and a SETTINGS frame that turns
 * on extended CONNECT, HTTP datagrams and WebTransport, in both the RFC and the draft forms that
 * browsers check, with a QPACK dynamic table of 0 bytes.
 */
export function serverControlStreamPreamble(maxSessions = 1): Uint8Array {
  const settings = new Map<number, number>([
    [SETTING.QPACK_MAX_TABLE_CAPACITY, 0],
    [SETTING.QPACK_BLOCKED_STREAMS, 0],
    [SETTING.ENABLE_CONNECT_PROTOCOL, 1],
    [SETTING.H3_DATAGRAM, 1],
    [SETTING.H3_DATAGRAM_DRAFT04, 1],
    [SETTING.ENABLE_WEBTRANSPORT_DRAFT02, 1],
    [SETTING.WEBTRANSPORT_MAX_SESSIONS_DRAFT, maxSessions],
    [SETTING.WEBTRANSPORT_MAX_SESSIONS, maxSessions],
  ]);
  return concatBytes(encodeVarint(STREAM.CONTROL), encodeSettingsFrame(settings));
}

/**
 * Whether a client's SETTINGS allow a WebTransport session with datagrams: HTTP datagrams on
 * (RFC 9297 or its draft id) and WebTransport announced (draft-02 enable flag or a non-zero
 * session limit).
 */
export function peerSupportsWebTransport(settings: ReadonlyMap<number, number>): boolean {
  const datagrams =
    settings.get(SETTING.H3_DATAGRAM) === 1 || settings.get(SETTING.H3_DATAGRAM_DRAFT04) === 1;
  const wt =
    settings.get(SETTING.ENABLE_WEBTRANSPORT_DRAFT02) === 1 ||
    (settings.get(SETTING.WEBTRANSPORT_MAX_SESSIONS) ?? 0) > 0;
  return datagrams && wt;
}

/** The prefix of every HTTP datagram of a session: its quarter stream id (RFC 9297 §2.1). */
export function datagramPrefix(sessionStreamId: number): Uint8Array {
  return encodeVarint(Math.floor(sessionStreamId / 4));
}

/** Builds one datagram: the session prefix and the payload, in one allocation. */
export function buildDatagram(prefix: Uint8Array, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(prefix.length + payload.length);
  out.set(prefix, 0);
  out.set(payload, prefix.length);
  return out;
}
