/**
 * The WebTransport edge node (docs/architecture.md "Runtime pieces"): the same
 * stateless rounds source and fan-out hub as services/edge (every partition of `rounds`, no
 * shared consumer group), the WebTransport transport on WT_PORT, and a plain HTTP server on
 * WT_HTTP_PORT. `main.ts` only builds and starts it; the e2e test runs it as a process.
 */
import {
  type GuardedStreamAccess,
  guardStreamAccess,
  startFailureBudget,
} from '../../lib/auth/failure-budget.ts';
import { startKeyTable } from '../../lib/auth/key-table.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import type { Logger } from '../../lib/logger.ts';
import { createStreamAccess } from '../../lib/stream/access.ts';
import { createEdgeStreams } from '../../lib/stream/core.ts';
import type { FanOutHub } from '../../lib/stream/hub.ts';
import { initProtocolSeries } from '../../lib/stream/metrics.ts';
import type { RoundSource } from '../../lib/stream/source.ts';
import { type CertificateInfo, loadCertificate } from './cert.ts';
import { createHttpHandler } from './http.ts';
import { createWtMetrics, PROTOCOL, type WtMetrics } from './metrics.ts';
import type { WtConfig } from './settings.ts';
import { createWtTransport, type WtTransport } from './transport.ts';

export interface WtEdgeDeps {
  readonly config: WtConfig;
  readonly logger: Logger;
}

export interface WtEdge {
  readonly hub: FanOutHub;
  readonly metrics: WtMetrics;
  readonly source: RoundSource;
  /** UDP port of the QUIC listener, once started. */
  readonly quicPort: number;
  /** TCP port of the HTTP server, once started. */
  readonly httpPort: number;
  /**
   * Loads the certificate, starts the rounds source (latest rounds, then live), the QUIC
   * listener and the HTTP server.
   * @throws CertificateError for an unusable certificate; kafkajs errors when the broker is down.
   */
  start(): Promise<void>;
  /** Ends sessions over `drainMs` (default EDGE_DRAIN_MS), then the HTTP server and the source. */
  stop(drainMs?: number): Promise<void>;
}

export function buildWtEdge(deps: WtEdgeDeps): WtEdge {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'edge-webtransport' });
  const metrics = createWtMetrics();
  const kafka = createKafka(config, 'edge-webtransport', deps.logger);
  const { hub, source, core } = createEdgeStreams({ kafka, config, logger: deps.logger, metrics });
  let transport: WtTransport | undefined;
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  let certificate: CertificateInfo | undefined;
  let started = false;
  let access: GuardedStreamAccess | undefined;
  let closeTable: (() => Promise<void>) | undefined;
  let closeBudget: (() => Promise<void>) | undefined;

  return {
    hub,
    metrics,
    source,
    get quicPort() {
      return transport?.port ?? 0;
    },
    get httpPort() {
      return server?.addr.port ?? 0;
    },
    async start() {
      certificate = loadCertificate(config.wt, Date.now());
      const left = certificate.notAfter.getTime() - Date.now();
      if (left < 24 * 3600 * 1000) {
        logger.warn(
          { expiresAt: certificate.notAfter, file: certificate.certFile },
          'certificate expires within a day',
        );
      }
      server = Deno.serve(
        { hostname: config.wt.host, port: config.wt.httpPort, onListen: () => {} },
        createHttpHandler({
          certificate,
          register: metrics.register,
          isReady: () => started && source.ready,
        }),
      );
      // The key table from `auth-keys` (revocations within a second), like the Node edge.
      const table = await startKeyTable({ config, kafka, logger: deps.logger, registry: metrics.register });
      closeTable = () => table.close();
      const { requireWs: ws, requireSse: sse, requireGrpc: grpc, requireWt: wt } = config.auth;
      // The failed-credential budget of the API and the Node edge (lib/auth/failure-budget.ts): the
      // same code under Deno, shared with them in RATE_LIMIT_REDIS_URL's Redis when that is set.
      const failures = await startFailureBudget({
        settings: config.failureBudget,
        topicNamespace: config.kafka.topicNamespace,
        logger: deps.logger,
        registry: metrics.register,
        connectionName: 'casino-edge-webtransport-rate-limit',
      });
      closeBudget = () => failures.close();
      access = guardStreamAccess(
        createStreamAccess({ table, require: { ws, sse, grpc, wt }, metrics }),
        failures.budget,
        metrics.authRefusals,
      );
      await source.start();
      core.start();
      transport = createWtTransport({
        core,
        heartbeatMs: config.edge.sseHeartbeatMs,
        metrics,
        logger: deps.logger,
        wt: config.wt,
        certificate,
        access,
      });
      await transport.start();
      initProtocolSeries(metrics, PROTOCOL);
      started = true;
      logger.info(
        {
          quicPort: transport.port,
          httpPort: server.addr.port,
          certificate: {
            source: certificate.source,
            file: certificate.certFile,
            expiresAt: certificate.notAfter,
          },
        },
        'webtransport edge started',
      );
    },
    async stop(drainMs = config.edge.drainMs) {
      started = false;
      await transport?.stop(drainMs);
      await server?.shutdown();
      await core.stop();
      await source.stop();
      access?.close();
      await closeTable?.();
      await closeBudget?.();
      logger.info('webtransport edge stopped');
    },
  };
}
