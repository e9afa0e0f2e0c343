/**
 * Prometheus metrics of the WebTransport edge: the edge's common set (lib/stream/metrics.ts,
 * label `protocol="webtransport"`; `edge_subscribers` = open sessions, `edge_deliveries_total` =
 * datagrams handed to QUIC) plus the figures only this transport has.
 */
import { Counter } from 'prom-client';
import { createEdgeMetrics, type EdgeMetrics } from '../../lib/stream/metrics.ts';

/** The `protocol` label value of this transport. */
export const PROTOCOL = 'webtransport';

export interface WtMetrics extends EdgeMetrics {
  /** CONNECT requests answered, by status (200 = session opened; 400, 404, 503 = refused). */
  readonly sessionRequests: Counter<'status'>;
  /** Connections closed before any response: `timeout` (no CONNECT in time) or `protocol`. */
  readonly handshakeFailures: Counter<'reason'>;
  /** Datagrams not sent: `too_large` (above the path's maximum) or `send_failed`. */
  readonly datagramsDropped: Counter<'reason'>;
}

/** A fresh registry with the edge's metrics and the WebTransport ones. */
export function createWtMetrics(): WtMetrics {
  const base = createEdgeMetrics('edge-webtransport');
  const registers = [base.register];
  return {
    ...base,
    sessionRequests: new Counter({
      name: 'edge_wt_session_requests_total',
      help: 'WebTransport CONNECT requests answered, by response status.',
      labelNames: ['status'] as const,
      registers,
    }),
    handshakeFailures: new Counter({
      name: 'edge_wt_handshake_failures_total',
      help: 'QUIC connections closed before a CONNECT response, by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
    datagramsDropped: new Counter({
      name: 'edge_wt_datagrams_dropped_total',
      help: 'Round datagrams not sent, by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}
