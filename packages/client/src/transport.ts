/**
 * The contract between the client (client.ts) and a wire protocol (transports/): a transport opens
 * one connection that carries every subscription as envelopes. WebSocket and WebTransport carry
 * them on one socket or session; SSE and gRPC open one stream per subscription and present them
 * as one connection (any stream failing fails the connection, and the client resumes them all).
 */
import type { Envelope } from './types.ts';

/** One subscription as asked of the server. */
export interface SubscribeRequest {
  /** `game:<slug>`, `type:<type>` or `all`. */
  readonly sub: string;
  /** A position to resume from. */
  readonly since?: string;
  /** The latest round of each game first. */
  readonly latest: boolean;
  /** Lifecycle messages. */
  readonly lifecycle: boolean;
}

/** Why a connection ended. */
export interface CloseInfo {
  /** WebSocket/WebTransport close code, HTTP status or gRPC status name, when known. */
  readonly code?: number | string;
  readonly reason: string;
  /** True when retrying cannot help (e.g. the browser lacks the API). */
  readonly fatal?: boolean;
}

/** What a connection reports. */
export interface ConnectionEvents {
  /** The connection is up (the first stream answered, for SSE and gRPC). */
  open(): void;
  message(e: Envelope): void;
  /** Once; the connection is over. */
  close(info: CloseInfo): void;
}

/** An open (or opening) connection. */
export interface Connection {
  /** Asks for a subscription; called at once after `connect`, so held until the connection is up. */
  subscribe(r: SubscribeRequest): void;
  unsubscribe(sub: string): void;
  /** Closes it; `close` is not reported for a close asked by the client. */
  close(): void;
}

/** What every transport gets to connect. */
export interface ConnectContext {
  /** The platform's origin for HTTP-based addresses (`https://casino.example`). */
  readonly baseUrl: string;
  /** A credential for this connection (a fresh token each time when the client has a key), or undefined. */
  readonly credential: string | undefined;
}

/** A wire protocol. */
export interface Transport {
  /** `websocket`, `sse`, `webtransport`, `grpc`. */
  readonly name: string;
  connect(ctx: ConnectContext, events: ConnectionEvents): Connection;
}
