/**
 * The edge node (docs/conventions.md §1, §8): one rounds source feeding one fan-out hub, a list of
 * transports that subscribe to it (WebSocket, SSE, gRPC, the gRPC proxy), and one fastify server
 * for the HTTP-based transports and `/health`, `/ready`, `/metrics`. `main.ts` only builds it;
 * tests start it in-process with ports 0.
 *
 * A transport adds itself by implementing `Transport` and joining `defaultTransports()`.
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { AggregatorRegistry } from 'prom-client';
import {
  type GuardedStreamAccess,
  guardStreamAccess,
  startFailureBudget,
} from '../../lib/auth/failure-budget.ts';
import { startKeyTable } from '../../lib/auth/key-table.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { seedFrameworkErrors } from '../../lib/http/error-form.ts';
import { proxyTrust } from '../../lib/http/trust.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import type { Logger } from '../../lib/logger.ts';
import { type AccessKeyTable, createStreamAccess } from '../../lib/stream/access.ts';
import { createEdgeStreams, type StreamCore } from '../../lib/stream/core.ts';
import type { FanOutHub } from '../../lib/stream/hub.ts';
import { createEdgeMetrics, type EdgeMetrics, initProtocolSeries } from '../../lib/stream/metrics.ts';
import type { RoundSource } from '../../lib/stream/source.ts';
import type { EdgeConfig } from './config.ts';
import { httpReplyForError } from './errors.ts';
import { createGrpcTransport } from './transports/grpc/grpc.ts';
import { createGrpcProxyTransport } from './transports/grpc-proxy/grpc-proxy.ts';
import { createSseTransport } from './transports/sse/sse.ts';
import type { EdgeContext, Transport } from './transports/transport.ts';
import { createWsTransport } from './transports/ws/ws.ts';
import type { MetricJson } from './ws-threads.ts';

export type { EdgeContext, Transport } from './transports/transport.ts';

export interface EdgeDeps {
  readonly config: EdgeConfig;
  readonly logger: Logger;
  /** Defaults to `defaultTransports()`. */
  readonly transports?: readonly Transport[];
  readonly sql?: Sql;
  /** The key table; default: `startKeyTable` on the `auth-keys` topic at start (closed at stop). */
  readonly keyTable?: AccessKeyTable;
  /** Other parts of this edge that /ready waits for (its further WebSocket threads). */
  readonly alsoReady?: () => boolean;
  /** Metrics of other threads of this edge (ws-threads.ts), added to /metrics. */
  readonly moreMetrics?: () => Promise<MetricJson[][]>;
}

export interface Edge {
  readonly hub: FanOutHub;
  /** Resumes and subscriptions of every transport. */
  readonly core: StreamCore;
  readonly metrics: EdgeMetrics;
  readonly source: RoundSource;
  readonly http: FastifyInstance;
  readonly transports: readonly Transport[];
  /** The key table behind the credential checks, once started. */
  readonly keyTable: AccessKeyTable | undefined;
  /** Port of the HTTP server (SSE, health, metrics) once started. */
  readonly httpPort: number;
  /** The port of the transport named `name` (e.g. 'ws'); throws when it has none. */
  portOf(name: string): number;
  /** Source first (latest rounds in memory), then transports, then the HTTP listener. */
  start(): Promise<void>;
  /** Transports drain in parallel over `drainMs` (default config.edge.drainMs), then the rest closes. */
  stop(drainMs?: number): Promise<void>;
}

/** The transports an edge runs when none are given. */
export function defaultTransports(): Transport[] {
  const grpc = createGrpcTransport();
  // The proxy dials the gRPC transport, so it starts after it.
  return [createWsTransport(), createSseTransport(), grpc, createGrpcProxyTransport(grpc)];
}

/** Builds an edge; nothing is opened until `start()`. */
export function buildEdge(deps: EdgeDeps): Edge {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'edge' });
  const metrics = createEdgeMetrics();
  const kafka = createKafka(config, 'edge', deps.logger);
  const { hub, source, core } = createEdgeStreams({ kafka, config, logger: deps.logger, metrics });
  const transports = deps.transports ?? defaultTransports();
  // SSE streams stay open for hours; fastify's request timeout must not cut them. A slug of any
  // length reaches the selection parser (400 "Invalid game slug", as the API answers it, not the
  // router's 414), and fastify's own errors go out in the seed form with CORS.
  const http = Fastify({
    logger: false,
    requestTimeout: 0,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 16_384 },
    frameworkErrors: seedFrameworkErrors(),
    // req.ip is the client the failed-credential budget counts: the peer, or the browser named in
    // X-Forwarded-For by a trusted proxy (EDGE_TRUST_PROXY: the gateway on loopback by default).
    trustProxy: proxyTrust(config.edge.trustProxy, 'EDGE_TRUST_PROXY'),
  });
  let httpPort = 0;
  let started = false;
  let access: GuardedStreamAccess | undefined;
  let keyTable: AccessKeyTable | undefined = deps.keyTable;
  let closeTable: (() => Promise<void>) | undefined;
  let closeBudget: (() => Promise<void>) | undefined;

  http.setErrorHandler((err: FastifyError, _req, reply) => {
    const r = httpReplyForError(err);
    if (r.status >= 500) logger.error({ err }, 'edge request failed');
    reply.code(r.status).headers(r.headers).send(r.body);
  });
  http.setNotFoundHandler((_req, reply) => {
    reply.code(404).header('Access-Control-Allow-Origin', '*').send({ error: 'Not found', success: false });
  });
  http.get('/health', async () => ({ status: 'ok' }));
  http.get('/ready', async (_req, reply) => {
    const ready = started && source.ready && (deps.alsoReady?.() ?? true);
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'starting', source: source.ready ? 'live' : 'catching up' };
  });
  http.get('/metrics', async (_req, reply) => {
    reply.type(metrics.register.contentType);
    const more = deps.moreMetrics ? (await deps.moreMetrics()).filter((m) => m.length > 0) : [];
    if (more.length === 0) return metrics.register.metrics();
    // The threads' series, each labelled with its thread (prom-client's cluster aggregation).
    return AggregatorRegistry.aggregate([await metrics.register.getMetricsAsJSON(), ...more]).metrics();
  });

  return {
    hub,
    core,
    metrics,
    source,
    http,
    transports,
    get httpPort() {
      return httpPort;
    },
    get keyTable() {
      return keyTable;
    },
    portOf(name) {
      const p = transports.find((t) => t.name === name)?.port;
      if (p === undefined) throw new Error(`transport ${name} has no port (not started or not present)`);
      return p;
    },
    async start() {
      let table = deps.keyTable;
      if (!table) {
        const t = await startKeyTable({ config, kafka, logger: deps.logger, registry: metrics.register });
        closeTable = () => t.close();
        table = t;
        keyTable = t;
      }
      const { requireWs: ws, requireSse: sse, requireGrpc: grpc, requireWt: wt } = config.auth;
      // The failed-credential budget the API applies too (lib/auth/failure-budget.ts), shared with
      // it and the other edges in RATE_LIMIT_REDIS_URL's Redis when that is set.
      const failures = await startFailureBudget({
        settings: config.failureBudget,
        topicNamespace: config.kafka.topicNamespace,
        logger: deps.logger,
        registry: metrics.register,
        connectionName: 'casino-edge-rate-limit',
      });
      closeBudget = () => failures.close();
      access = guardStreamAccess(
        createStreamAccess({ table, require: { ws, sse, grpc, wt }, metrics }),
        failures.budget,
        metrics.authRefusals,
      );
      await source.start();
      core.start();
      const ctx: EdgeContext = {
        hub,
        config,
        logger: deps.logger,
        kafka,
        metrics,
        http,
        sql: deps.sql,
        access,
        core,
      };
      for (const t of transports) {
        await t.start(ctx);
        initProtocolSeries(metrics, t.name); // the transport's name is its `protocol` label
      }
      await http.listen({ host: config.edge.host, port: config.edge.httpPort });
      const addr = http.server.address();
      httpPort = typeof addr === 'object' && addr ? addr.port : config.edge.httpPort;
      started = true;
      logger.info(
        { http: httpPort, transports: transports.map((t) => [t.name, t.port ?? httpPort]) },
        'edge started',
      );
    },
    async stop(drainMs = config.edge.drainMs) {
      started = false;
      await Promise.allSettled(transports.map((t) => t.stop(drainMs)));
      await http.close();
      await core.stop();
      await source.stop();
      access?.close();
      await closeTable?.();
      await closeBudget?.();
      logger.info('edge stopped');
    },
  };
}
