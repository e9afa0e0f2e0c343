/**
 * Client process of the edge benchmarks (forked by bench/edge-harness.ts with IPC): holds
 * subscribers of one protocol, so the load clients never share an event loop with the edge or
 * with the process that appends rounds. Requests and replies (advanced serialisation):
 *
 * - `{ op: 'open', protocol, host, port, path, count, localAddresses, concurrency, grpcChannels }`
 *   → `{ opened, failed, firstError, ms }`; at most `concurrency` handshakes in flight, source
 *   addresses used round-robin (WebSocket and SSE; gRPC uses `grpcChannels` connections).
 * - `{ op: 'reset', since }` → `{}`: forget deliveries, count only timestamps ≥ `since` (Unix ms).
 * - `{ op: 'count' }` → `{ count }`: deliveries counted since the reset (cheap, for polling).
 * - `{ op: 'stats' }` → `{ count, latencies, timestamps, first, last }` (ms, wall-clock ms).
 * - `{ op: 'close' }` → `{}` after every subscriber is destroyed; the process then exits.
 */
import type { DataStreamClient } from '../services/edge/transports/grpc/proto.ts';
import { type OpenReply, openAll, serveParent } from './client-worker.ts';
import { type Conn, grpcClients, openGrpc, openSse, openWs, Recorder, type WsProtocol } from './edge-wire.ts';

export type { OpenReply };

export type Protocol = 'ws' | 'sse' | 'grpc';

export interface OpenRequest {
  op: 'open';
  protocol: Protocol;
  host: string;
  port: number;
  /** Stream path (`/ws/crash`, `/sse/crash`); for gRPC the game slug. */
  path: string;
  count: number;
  localAddresses: string[];
  concurrency: number;
  grpcChannels: number;
  /** WebSocket: a server protocol's hello and pings (bench/edge-wire.ts WsProtocol). */
  ws?: WsProtocol;
}
export type Request =
  | OpenRequest
  | { op: 'reset'; since: number }
  | { op: 'count' }
  | { op: 'stats' }
  | { op: 'close' };

export interface StatsReply {
  count: number;
  latencies: Float64Array;
  /** The `timestamp` of each delivery (same order as `latencies`). */
  timestamps: Float64Array;
  first: number;
  last: number;
}

const HANDSHAKE_TIMEOUT_MS = 20_000;
const rec = new Recorder();
const conns: Conn[] = [];
const channels: DataStreamClient[] = [];

async function open(r: OpenRequest): Promise<OpenReply> {
  if (r.protocol === 'grpc') channels.push(...grpcClients(`${r.host}:${r.port}`, r.grpcChannels));
  const openOne = (i: number): Promise<Conn> => {
    if (r.protocol === 'grpc') {
      const client = channels[i % channels.length] as DataStreamClient;
      return openGrpc(client, r.path, rec, HANDSHAKE_TIMEOUT_MS);
    }
    const target = {
      host: r.host,
      port: r.port,
      path: r.path,
      localAddress: r.localAddresses[i % r.localAddresses.length],
      timeoutMs: HANDSHAKE_TIMEOUT_MS,
    };
    return r.protocol === 'ws' ? openWs(target, rec, r.ws) : openSse(target, rec);
  };
  return await openAll(r.count, r.concurrency, openOne, conns);
}

async function handle(r: Request): Promise<unknown> {
  switch (r.op) {
    case 'open':
      return await open(r);
    case 'reset':
      rec.reset(r.since);
      return {};
    case 'count':
      return { count: rec.count };
    case 'stats':
      return {
        count: rec.count,
        latencies: rec.latencies.slice(0, rec.count),
        timestamps: rec.timestamps.slice(0, rec.count),
        first: rec.first,
        last: rec.last,
      } satisfies StatsReply;
    case 'close':
      for (const c of conns.splice(0)) c.close();
      for (const c of channels.splice(0)) c.close();
      return {};
  }
}

serveParent(handle);
