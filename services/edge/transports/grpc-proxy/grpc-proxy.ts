/**
 * The gRPC proxy as an edge transport: registers {@link grpcProxyPlugin} on the edge's HTTP
 * server, dialling the edge's own gRPC transport (so it must come after it in the transport
 * list). It has no listener of its own.
 */
import { closeSpread } from '../../../../lib/stream/drain.ts';
import type { GrpcTransport } from '../grpc/grpc.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { grpcProxyPlugin } from './plugin.ts';
import type { Relay } from './relay.ts';

export const PROTOCOL = 'grpc-proxy';

/** A proxy transport relaying calls to `grpc` (started before it by the edge). */
export function createGrpcProxyTransport(grpc: Pick<GrpcTransport, 'address'>): Transport {
  const relays = new Set<Relay>();
  return {
    name: PROTOCOL,
    async start(ctx: EdgeContext) {
      await ctx.http.register(
        grpcProxyPlugin({
          grpcAddress: () => grpc.address,
          logger: ctx.logger,
          heartbeatMs: ctx.config.edge.sseHeartbeatMs,
          relays,
          gauge: ctx.metrics.subscribers.labels(PROTOCOL),
        }),
      );
    },
    /** Ends open relays spread over `drainMs` (their pages reconnect, like SSE clients). */
    async stop(drainMs: number) {
      await closeSpread([...relays], drainMs, (r) => r.end());
    },
  };
}
