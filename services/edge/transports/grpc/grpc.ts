/**
 * The gRPC transport of the edge: datastream.DataStream on GRPC_HOST:GRPC_PORT
 * (docs/contract.md: `{grpc_host}:50051`) with insecure credentials, plus server reflection and the
 * standard health service (grpc.health.v1, SERVING for "" and datastream.DataStream), so
 * `grpcurl -plaintext 127.0.0.1:50051 list` works with no .proto at hand (docs/contract.md "Streaming endpoints").
 * Credentials (docs/contract.md "Authentication" 5) are checked per call in service.ts (AUTH_REQUIRE_GRPC).
 */

import { resolve } from 'node:path';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { proxyTrust } from '../../../../lib/http/trust.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { dataStreamService, LOADER_OPTIONS, loadDataStream, SERVICE_NAME } from './proto.ts';
import { createHandlers } from './service.ts';
import type { GrpcStreamSubscription } from './stream.ts';

/** The health service as reflection describes it (Check and Watch). */
const HEALTH_REFLECTION_PROTO = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'proto',
  'health-reflection.proto',
);

/** After the drain window, calls still open (a client that stopped reading) get this long. */
const FORCE_AFTER_DRAIN_MS = 1000;

export interface GrpcTransport extends Transport {
  /** `host:port` clients dial once started (the proxy uses it). @throws Error before start. */
  readonly address: string;
  /** Open DataStream streams. */
  readonly openStreams: number;
}

/** `host:port`, with an IPv6 literal bracketed. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A gRPC transport; its server is created in `start` and gone after `stop`. */
export function createGrpcTransport(): GrpcTransport {
  const streams = new Set<GrpcStreamSubscription>();
  let server: Server | undefined;
  let health: HealthImplementation | undefined;
  let host = '';
  let port: number | undefined;
  let accepting = false;

  return {
    name: 'grpc',
    get port() {
      return port;
    },
    get address() {
      if (port === undefined) throw new Error('gRPC transport not started');
      return hostPort(host, port);
    },
    get openStreams() {
      return streams.size;
    },

    async start(ctx: EdgeContext) {
      const logger = ctx.logger.child({ component: 'grpc' });
      const s = new Server({
        // Pings find peers that vanished without a FIN, whose streams would otherwise stay subscribed.
        'grpc.keepalive_time_ms': 60_000,
        'grpc.keepalive_timeout_ms': 20_000,
      });
      s.addService(
        dataStreamService(),
        createHandlers({
          hub: ctx.hub,
          sql: ctx.sql,
          metrics: ctx.metrics,
          maxBufferBytes: ctx.config.grpc.maxBufferBytes,
          logger,
          streams,
          accepting: () => accepting,
          access: ctx.access,
          trust: proxyTrust(ctx.config.edge.trustProxy, 'EDGE_TRUST_PROXY'),
          core: ctx.core,
          heartbeatMs: ctx.config.edge.sseHeartbeatMs,
        }),
      );
      // Reflection describes the health service too, so grpcurl can call it by name with no proto
      // at hand (Check, Watch: health-reflection.proto says why not grpc-health-check's file).
      new ReflectionService({
        ...loadDataStream(),
        ...loadSync(HEALTH_REFLECTION_PROTO, LOADER_OPTIONS),
      }).addToServer(s);
      health = new HealthImplementation({ '': 'SERVING', [SERVICE_NAME]: 'SERVING' });
      health.addToServer(s);
      host = ctx.config.grpc.host;
      try {
        port = await new Promise<number>((resolve, reject) => {
          s.bindAsync(hostPort(host, ctx.config.grpc.port), ServerCredentials.createInsecure(), (err, p) =>
            err ? reject(err) : resolve(p),
          );
        });
      } catch (err) {
        s.forceShutdown();
        throw err;
      }
      server = s;
      accepting = true;
      logger.info({ address: hostPort(host, port) }, 'gRPC listening');
    },

    /**
     * Refuses new calls, reports NOT_SERVING, ends open streams with UNAVAILABLE spread over
     * `drainMs` (clients reconnect to another edge without a thundering herd), waits for the
     * calls to finish, and force-closes what is left `drainMs` + 1 s after the start.
     */
    async stop(drainMs: number) {
      const s = server;
      if (!s) return;
      server = undefined;
      accepting = false;
      health?.setStatus('', 'NOT_SERVING');
      health?.setStatus(SERVICE_NAME, 'NOT_SERVING');
      const done = new Promise<void>((resolve) => s.tryShutdown(() => resolve()));
      let force: NodeJS.Timeout | undefined;
      const forced = new Promise<void>((resolve) => {
        force = setTimeout(() => {
          s.forceShutdown();
          resolve();
        }, drainMs + FORCE_AFTER_DRAIN_MS);
      });
      const shutdown = { code: status.UNAVAILABLE, details: 'server shutting down' };
      await closeSpread([...streams], drainMs, (sub) => sub.end(shutdown));
      await Promise.race([done, forced]);
      clearTimeout(force);
      port = undefined;
    },
  };
}
