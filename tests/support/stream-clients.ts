/**
 * Stream clients for the edge's credential tests (not a test file): one `attempt` per protocol
 * that sends a credential the way docs/contract.md "Authentication" says and reports the outcome as an
 * HTTP-like status (an open stream is 200; gRPC codes map to 401/403/429 as the proxy does).
 */
import { get } from 'node:http';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import WebSocket from 'ws';
import type { Edge } from '../../services/edge/edge.ts';

/** Where an edge listens. */
export interface EdgePorts {
  readonly ws: number;
  readonly http: number;
  readonly grpc?: number;
}

/** The ports of an in-process edge. */
export function portsOf(edge: Edge): EdgePorts {
  return { ws: edge.portOf('ws'), http: edge.httpPort, grpc: edge.portOf('grpc') };
}

import { createDataStreamClient } from '../../services/edge/transports/grpc/proto.ts';

export type StreamProto = 'ws' | 'sse' | 'grpc' | 'grpc-proxy';

export interface AttemptOptions {
  /** `crash`, `type/multiplier` or (gRPC only) `all`. */
  readonly path: string;
  readonly credential?: string;
  readonly origin?: string;
  /** SSE and the proxy: a Referer header (a same-origin EventSource sends it instead of Origin). */
  readonly referer?: string;
  /** SSE/gRPC: send the credential in the query (`token`/`api_key`) or as `Authorization: Bearer`. */
  readonly via?: 'header' | 'query' | 'bearer';
  /** The client a proxy names: `X-Forwarded-For` (gRPC: metadata `x-forwarded-for`). */
  readonly forwardedFor?: string;
  /**
   * WebSocket, SSE and the proxy: the loopback address to connect from (e.g. `127.0.0.3`), so a
   * proxy in front of the edge sees distinct clients; the system picks one when absent.
   */
  readonly localAddress?: string;
}

export interface Attempt {
  /** 200 when the stream opened; else the refusal's status. */
  readonly status: number;
  /** Messages (WebSocket frames, SSE data, gRPC round ids) received so far. */
  readonly received: string[];
  /** Resolves when the server ends an open stream (WebSocket: with its close code). */
  readonly ended: Promise<number | string>;
  close(): void;
}

const GRPC_HTTP: Partial<Record<number, number>> = {
  [status.UNAUTHENTICATED]: 401,
  [status.PERMISSION_DENIED]: 403,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.NOT_FOUND]: 404,
};

function queryOf(o: AttemptOptions): string {
  if (!o.credential || o.via !== 'query') return '';
  return `?${o.credential.startsWith('tok_') ? 'token' : 'api_key'}=${encodeURIComponent(o.credential)}`;
}

function headersOf(o: AttemptOptions): Record<string, string> {
  const h: Record<string, string> = {};
  if (o.origin) h.Origin = o.origin;
  if (o.referer) h.Referer = o.referer;
  if (o.forwardedFor) h['X-Forwarded-For'] = o.forwardedFor;
  if (o.credential && o.via !== 'query') {
    if (o.via === 'bearer') h.Authorization = `Bearer ${o.credential}`;
    else h['X-API-Key'] = o.credential;
  }
  return h;
}

function ws(port: number, o: AttemptOptions): Promise<Attempt> {
  const sock = new WebSocket(`ws://127.0.0.1:${port}/ws/${o.path}`, o.credential ? [o.credential] : [], {
    ...(o.origin ? { origin: o.origin } : {}),
    ...(o.forwardedFor ? { headers: { 'X-Forwarded-For': o.forwardedFor } } : {}),
    ...(o.localAddress ? { localAddress: o.localAddress } : {}),
  });
  const received: string[] = [];
  sock.on('message', (d) => received.push(d.toString()));
  const ended = new Promise<number>((r) => sock.once('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    sock.once('open', () => resolve({ status: 200, received, ended, close: () => sock.close() }));
    sock.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, received, ended, close: () => {} });
    });
    sock.once('error', reject);
  });
}

function http(port: number, path: string, o: AttemptOptions): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    const req = get(
      // A fresh connection per attempt: a 431 closes its socket, which a keep-alive agent would reuse.
      {
        host: '127.0.0.1',
        port,
        path: `${path}${queryOf(o)}`,
        headers: headersOf(o),
        agent: false,
        ...(o.localAddress ? { localAddress: o.localAddress } : {}),
      },
      (res) => {
        const received: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          for (const line of d.split('\n')) if (line.startsWith('data:')) received.push(line.slice(5).trim());
        });
        const ended = new Promise<string>((r) => res.once('close', () => r('closed')));
        resolve({ status: res.statusCode ?? 0, received, ended, close: () => req.destroy() });
      },
    );
    req.once('error', reject);
  });
}

function grpc(port: number, o: AttemptOptions): Promise<Attempt> {
  const client = createDataStreamClient(`127.0.0.1:${port}`);
  const md = new Metadata();
  if (o.credential) {
    if (o.via === 'bearer') md.set('authorization', `Bearer ${o.credential}`);
    else md.set('x-api-key', o.credential);
  }
  if (o.origin) md.set('origin', o.origin);
  if (o.forwardedFor) md.set('x-forwarded-for', o.forwardedFor);
  const call = o.path.startsWith('type/')
    ? client.StreamByType({ game_type: o.path.slice(5) }, md)
    : o.path === 'all'
      ? client.StreamAll({}, md)
      : client.StreamByGame({ game_slug: o.path }, md);
  const received: string[] = [];
  call.on('data', (m: { round_id: unknown }) => received.push(String(m.round_id)));
  const ended = new Promise<string>((r) => {
    call.once('error', (e: ServiceError) => r(status[e.code] ?? String(e.code)));
    call.once('end', () => r('end'));
  });
  const close = () => {
    call.cancel();
    client.close();
  };
  return new Promise((resolve) => {
    call.once('metadata', () => resolve({ status: 200, received, ended, close }));
    call.once('error', (e: ServiceError) => {
      client.close();
      resolve({ status: GRPC_HTTP[e.code] ?? 500, received, ended, close: () => {} });
    });
  });
}

/**
 * Opens (or fails to open) a stream on an edge (in-process, or its ports) over `proto`.
 * @throws Error for gRPC when the ports have no `grpc`.
 */
export function attempt(target: Edge | EdgePorts, proto: StreamProto, o: AttemptOptions): Promise<Attempt> {
  const p = 'hub' in target ? portsOf(target) : target;
  if (proto === 'ws') return ws(p.ws, o);
  if (proto === 'sse') return http(p.http, `/sse/${o.path}`, o);
  if (proto === 'grpc-proxy') return http(p.http, `/grpc-proxy/stream/${o.path}`, o);
  if (p.grpc === undefined) throw new Error('no gRPC port given');
  return grpc(p.grpc, o);
}
