/**
 * The platform's stream client: every round once and in order per game, over WebSocket, SSE or
 * WebTransport (and gRPC in Node: `import { grpcTransport } from '<package>/grpc'`), resumed from
 * its last position across reconnects and edge restarts. See the package README for the API.
 */
export { type BackoffOptions, backoffDelay } from './backoff.ts';
export {
  type ClientOptions,
  type ClientState,
  createRoundsClient,
  type RoundMeta,
  RoundsClient,
  type StateChange,
  type SubscribeOptions,
  type Subscription,
} from './client.ts';
export { CredentialError, type Credentials } from './credentials.ts';
export { isPosition, roundsOf } from './position.ts';
export type {
  CloseInfo,
  ConnectContext,
  Connection,
  ConnectionEvents,
  SubscribeRequest,
  Transport,
} from './transport.ts';
export { type SseTransportOptions, sseTransport } from './transports/sse.ts';
export {
  type WebSocketConstructor,
  type WebSocketTransportOptions,
  webSocketUrl,
  websocketTransport,
} from './transports/websocket.ts';
export {
  type CertificateHash,
  certificateHashesFrom,
  type WebTransportOptions,
  webTransport,
  webTransportUrl,
} from './transports/webtransport.ts';
export type {
  BettingClosedMessage,
  Envelope,
  LifecycleMessage,
  RecoveredInfo,
  RoundOpenedMessage,
  Selection,
  ServerError,
  StreamRound,
} from './types.ts';
export { subscriptionName } from './types.ts';
