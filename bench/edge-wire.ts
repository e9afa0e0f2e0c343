/**
 * Minimal subscriber clients of the edge benchmarks, light enough that 5,000 of them fit in one
 * client process without it becoming the bottleneck:
 *
 * - WebSocket over `net`: a hand-written HTTP/1.1 upgrade, then only frame headers are parsed
 *   (RFC 6455 §5.2; server frames are unmasked); pings get a pong so uWS's idle timeout never
 *   fires. Not the `ws` package, whose per-socket machinery (not measured here) is not needed.
 * - SSE over `net`: a plain GET, a chunked-transfer decoder (RFC 9112 §7.1) and an event
 *   splitter; only `event: message` counts (`initial` is the round before the subscription).
 * - gRPC with @grpc/grpc-js: `StreamByGame` calls over a few channels (HTTP/2 connections).
 *
 * Every delivery goes to a {@link Recorder}: latency = receive wall time − the message's
 * `timestamp` (the Kafka append time, Unix ms; both clocks are this machine's).
 */
import { connect, type Socket } from 'node:net';
import {
  type ChannelOptions,
  credentials,
  makeClientConstructor,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import {
  type DataStreamClient,
  loadDataStream,
  SERVICE_NAME,
} from '../services/edge/transports/grpc/proto.ts';
import { integerAt, Recorder, TS_KEY, timestampIn, wallNow } from './recorder.ts';

export { Recorder, wallNow };

/**
 * Records every `"timestamp":` of `buf[start, end)`: a server may put several rounds in one frame
 * (Centrifugo joins the pushes of one write with newlines).
 */
function recordAll(rec: Recorder, buf: Buffer, start: number, end: number): void {
  let at = buf.indexOf(TS_KEY, start);
  while (at >= 0 && at < end) {
    rec.add(integerAt(buf, at + TS_KEY.length, end));
    at = buf.indexOf(TS_KEY, at + TS_KEY.length);
  }
}

export interface Target {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly localAddress?: string;
  /** Handshake deadline, ms. */
  readonly timeoutMs: number;
}

/** An open subscriber; `close` destroys it at once. */
export interface Conn {
  close(): void;
}

/** Connects and sends `request`; resolves with the socket and the bytes after the response head. */
function handshake(t: Target, request: string, expect: RegExp): Promise<{ sock: Socket; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: t.host, port: t.port, localAddress: t.localAddress });
    sock.setNoDelay(true);
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`handshake timeout after ${t.timeoutMs} ms`)), t.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      sock.destroy();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      sock.off('data', onData);
      sock.off('error', fail);
      const status = head.subarray(0, head.indexOf('\r\n')).toString();
      if (!expect.test(status)) {
        sock.destroy();
        reject(new Error(`unexpected response: ${status}`));
        return;
      }
      resolve({ sock, rest: head.subarray(end + 4) });
    };
    sock.on('connect', () => sock.write(request));
    sock.on('data', onData);
    sock.on('error', fail);
  });
}

/** Extras of a WebSocket subscriber for servers with a protocol of their own (Centrifugo's JSON protocol). */
export interface WsProtocol {
  /** A text message sent once the upgrade is done (e.g. connect and subscribe commands). */
  readonly hello?: string;
  /** Answer a text message `{}` (the server's application ping) with `{}`. */
  readonly answerEmptyPings?: boolean;
}

/** A masked client text frame of `text` (RFC 6455 §5.3; the zero mask leaves the payload as it is). */
function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const len = payload.length;
  const head =
    len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff]);
  return Buffer.concat([head, Buffer.alloc(4), payload]);
}

const EMPTY_PING = clientTextFrame('{}');

/** Whether one of the newline-separated messages of `payload` is `{}`. */
function hasEmptyLine(payload: Buffer): boolean {
  if (payload.length === 2) return payload[0] === 0x7b && payload[1] === 0x7d;
  return (
    payload.subarray(0, 3).equals(Buffer.from('{}\n')) ||
    payload.includes('\n{}\n') ||
    payload.subarray(payload.length - 3).equals(Buffer.from('\n{}'))
  );
}

/**
 * What a WebSocket subscriber does with its data frames: count every `"timestamp":` in a
 * {@link Recorder}, or hand each frame's payload and receive time (wall-clock ms, taken when its
 * bytes arrived) to a function that reads more of it (bench/lifecycle-watchers.ts).
 */
export type FrameSink = Recorder | ((payload: Buffer, receivedAt: number) => void);

/**
 * One WebSocket subscriber of `t.path`; every data frame goes to `sink`.
 * @throws on a refused upgrade or timeout.
 */
export async function openWs(t: Target, sink: FrameSink, proto: WsProtocol = {}): Promise<Conn> {
  const req =
    `GET ${t.path} HTTP/1.1\r\nHost: ${t.host}:${t.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
  const { sock, rest } = await handshake(t, req, /^HTTP\/1\.1 101 /);
  let pending: Buffer | null = null;
  const onData = (chunk: Buffer) => {
    const receivedAt = wallNow();
    const buf: Buffer = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = null;
    let i = 0;
    while (buf.length - i >= 2) {
      const b0 = buf[i] as number;
      const b1 = buf[i + 1] as number;
      let len = b1 & 0x7f;
      let hdr = 2;
      if (len === 126) {
        if (buf.length - i < 4) break;
        len = buf.readUInt16BE(i + 2);
        hdr = 4;
      } else if (len === 127) {
        if (buf.length - i < 10) break;
        len = Number(buf.readBigUInt64BE(i + 2));
        hdr = 10;
      }
      if (b1 & 0x80) hdr += 4;
      if (buf.length - i < hdr + len) break;
      const op = b0 & 0x0f;
      if (op === 1 || op === 2) {
        if (proto.answerEmptyPings && hasEmptyLine(buf.subarray(i + hdr, i + hdr + len)))
          sock.write(EMPTY_PING);
        if (typeof sink === 'function') sink(buf.subarray(i + hdr, i + hdr + len), receivedAt);
        else recordAll(sink, buf, i + hdr, i + hdr + len);
      } else if (op === 9) sock.write(Buffer.from([0x8a, 0x80, 0, 0, 0, 0]));
      i += hdr + len;
    }
    if (i < buf.length) pending = buf.subarray(i);
  };
  sock.on('data', onData);
  sock.on('error', () => sock.destroy());
  if (proto.hello) sock.write(clientTextFrame(proto.hello));
  if (rest.length > 0) onData(rest);
  return { close: () => sock.destroy() };
}

/** One SSE subscriber of `t.path`. @throws on a non-200 answer or timeout. */
export async function openSse(t: Target, rec: Recorder): Promise<Conn> {
  const req = `GET ${t.path} HTTP/1.1\r\nHost: ${t.host}:${t.port}\r\nAccept: text/event-stream\r\n\r\n`;
  const { sock, rest } = await handshake(t, req, /^HTTP\/1\.1 200 /);
  let raw: Buffer = Buffer.alloc(0);
  let events: Buffer = Buffer.alloc(0);
  let chunkLeft = -1; // -1: expecting a size line; else payload bytes still due (then CRLF)
  const onData = (chunk: Buffer) => {
    raw = raw.length ? Buffer.concat([raw, chunk]) : chunk;
    const parts: Buffer[] = [events];
    for (;;) {
      if (chunkLeft < 0) {
        const eol = raw.indexOf('\r\n');
        if (eol < 0) break;
        chunkLeft = Number.parseInt(raw.subarray(0, eol).toString(), 16);
        raw = raw.subarray(eol + 2);
        if (!(chunkLeft > 0)) chunkLeft = -1;
        continue;
      }
      if (raw.length < chunkLeft + 2) break;
      parts.push(raw.subarray(0, chunkLeft));
      raw = raw.subarray(chunkLeft + 2);
      chunkLeft = -1;
    }
    events = parts.length > 1 ? Buffer.concat(parts) : events;
    let start = 0;
    for (;;) {
      const end = events.indexOf('\n\n', start);
      if (end < 0) break;
      const ev = events.subarray(start, end);
      if (ev.includes('event: message')) rec.add(timestampIn(events, start, end));
      start = end + 2;
    }
    events = events.subarray(start);
  };
  sock.on('data', onData);
  sock.on('error', () => sock.destroy());
  if (rest.length > 0) onData(rest);
  return { close: () => sock.destroy() };
}

/**
 * `channels` DataStream clients to `address`, each its own HTTP/2 connection (a local
 * subchannel pool, else grpc-js would share one connection between identical channels).
 */
export function grpcClients(address: string, channels: number): DataStreamClient[] {
  const def = loadDataStream()[SERVICE_NAME] as ServiceDefinition;
  const Ctor = makeClientConstructor(def, SERVICE_NAME);
  const options: ChannelOptions = { 'grpc.use_local_subchannel_pool': 1 };
  return Array.from(
    { length: channels },
    () => new Ctor(address, credentials.createInsecure(), options) as unknown as DataStreamClient,
  );
}

/** One `StreamByGame(slug)` call on `client`; resolves once the server sent its headers. */
export function openGrpc(
  client: DataStreamClient,
  slug: string,
  rec: Recorder,
  timeoutMs: number,
): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const call = client.StreamByGame({ game_slug: slug });
    const timer = setTimeout(() => {
      call.cancel();
      reject(new Error(`stream not started after ${timeoutMs} ms`));
    }, timeoutMs);
    call.on('data', (m: { timestamp: number }) => rec.add(m.timestamp));
    call.on('error', (err: Error & { code?: number }) => {
      clearTimeout(timer);
      reject(err); // no-op once resolved; a cancel at close lands here too
    });
    call.once('metadata', () => {
      clearTimeout(timer);
      resolve({ close: () => call.cancel() });
    });
  });
}
