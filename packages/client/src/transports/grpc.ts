/**
 * gRPC transport for Node ("also gRPC in Node"): each subscription is one
 * `datastream.DataStream/StreamRoundEvents` call on one HTTP/2 connection, spoken with node:http2
 * and the hand-written codec of protobuf.ts (gRPC over HTTP/2: grpc/grpc doc/PROTOCOL-HTTP2.md),
 * so the client needs no gRPC package. The credential goes in metadata `x-api-key`.
 *
 * A call ended with INVALID_ARGUMENT, NOT_FOUND or PERMISSION_DENIED refuses its subscription
 * (400, 404, 403); any other end (UNAVAILABLE at an edge's shutdown, a lost connection) ends the
 * connection, and the client resumes every subscription.
 */
import { type ClientHttp2Session, connect } from 'node:http2';
import { decodeEvent, encodeEventsRequest } from '../protobuf.ts';
import type {
  ConnectContext,
  Connection,
  ConnectionEvents,
  SubscribeRequest,
  Transport,
} from '../transport.ts';

export interface GrpcTransportOptions {
  /** `host:port` of the edge's gRPC listener (docs/contract.md: `{grpc_host}:50051`), or one per base URL. */
  readonly address: string | ((baseUrl: string) => string);
}

const METHOD = '/datastream.DataStream/StreamRoundEvents';
/** gRPC status codes that refuse a subscription, as the HTTP-like statuses of the envelope. */
const REFUSALS: Record<number, number> = { 3: 400, 5: 404, 7: 403 };

/** The request fields of a subscription name. */
function selectionOf(sub: string): { game_slug?: string; game_type?: string; all?: boolean } {
  if (sub.startsWith('game:')) return { game_slug: sub.slice(5) };
  if (sub.startsWith('type:')) return { game_type: sub.slice(5) };
  return { all: true };
}

/** One gRPC message with its 5-byte prefix (not compressed). */
function frame(body: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out.writeUInt32BE(body.length, 1);
  out.set(body, 5);
  return out;
}

/** A gRPC transport (Node only). */
export function grpcTransport(options: GrpcTransportOptions): Transport {
  return {
    name: 'grpc',
    connect(ctx: ConnectContext, events: ConnectionEvents): Connection {
      let over = false;
      const calls = new Map<string, { close(): void }>();
      const address = typeof options.address === 'string' ? options.address : options.address(ctx.baseUrl);
      const session: ClientHttp2Session = connect(`http://${address}`);
      const fail = (code: number | string | undefined, reason: string) => {
        if (over) return;
        over = true;
        for (const c of calls.values()) c.close();
        session.destroy();
        events.close({ code, reason });
      };
      session.on('connect', () => {
        if (!over) events.open();
      });
      session.on('error', (err) => fail(undefined, err.message));
      session.on('close', () => fail(undefined, 'connection closed'));
      session.on('goaway', () => fail(undefined, 'server going away'));

      const call = (r: SubscribeRequest) => {
        const headers: Record<string, string> = {
          ':method': 'POST',
          ':path': METHOD,
          'content-type': 'application/grpc',
          te: 'trailers',
        };
        if (ctx.credential) headers['x-api-key'] = ctx.credential;
        const req = session.request(headers);
        const body = encodeEventsRequest({
          ...selectionOf(r.sub),
          since: r.since,
          latest: r.latest,
          lifecycle: r.lifecycle,
        });
        req.end(frame(body));
        let buf = Buffer.alloc(0);
        let status: number | undefined;
        let details = '';
        const readStatus = (h: Record<string, unknown>) => {
          if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
          if (typeof h['grpc-message'] === 'string') details = decodeURIComponent(h['grpc-message']);
        };
        req.on('response', readStatus);
        req.on('trailers', readStatus);
        req.on('data', (chunk: Buffer) => {
          buf = Buffer.concat([buf, chunk]);
          while (buf.length >= 5) {
            const len = buf.readUInt32BE(1);
            if (buf.length < 5 + len) break;
            const e = decodeEvent(buf.subarray(5, 5 + len), r.sub);
            buf = buf.subarray(5 + len);
            if (e && !over) events.message(e);
          }
        });
        req.on('close', () => {
          if (calls.get(r.sub) !== handle || over) return;
          calls.delete(r.sub);
          const refused = status === undefined ? undefined : REFUSALS[status];
          if (refused)
            events.message({
              type: 'error',
              sub: r.sub,
              position: null,
              data: { status: refused, error: details, op: 'subscribe' },
            });
          else fail(status, details || 'stream ended');
        });
        req.on('error', () => {}); // the close above reports it
        const handle = { close: () => req.close() };
        return handle;
      };

      return {
        subscribe(r) {
          calls.get(r.sub)?.close();
          calls.set(r.sub, call(r));
        },
        unsubscribe(sub) {
          const c = calls.get(sub);
          calls.delete(sub);
          c?.close();
        },
        close() {
          over = true;
          for (const c of calls.values()) c.close();
          session.close();
        },
      };
    },
  };
}
