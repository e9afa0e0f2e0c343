/**
 * The one-origin gateway of `npm start` (every endpoint path of the seed is
 * reachable from the pages' origin). A reverse proxy on GATEWAY_PORT:
 *
 * | path                       | upstream                         |
 * |----------------------------|----------------------------------|
 * | /health                    | the gateway itself               |
 * | /ws/* (upgrade)            | edge WebSocket port, TCP tunnel  |
 * | /ws/* (plain HTTP)         | edge WebSocket port              |
 * | /sse/*, /grpc-proxy/*      | edge HTTP port, streamed         |
 * | /webtransport/cert-hash    | WebTransport edge `/cert-hash`   |
 * | /console, /console/*       | the built console (console.ts)   |
 * | everything else            | API (REST, /openapi.json, pages) |
 *
 * WebTransport itself is UDP on its own port and cannot be proxied here; the pages connect to it
 * directly and only read its certificate hash through the gateway. Clients' addresses reach the
 * upstreams in X-Forwarded-For. An unreachable upstream is 502 `{error, success: false}`. A body
 * declared larger than the API reads (BODY_LIMIT_BYTES) is answered 413 here, in the API's form,
 * and never proxied: the API would refuse it and close mid-upload, which the proxy could only
 * report as an upstream failure (502). The public /health says only that the gateway runs.
 * The gateway's own /health, /ready and /metrics are on GATEWAY_OPS_PORT (ops.ts).
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import proxy from '@fastify/http-proxy';
import Fastify, { errorCodes, type FastifyError, type FastifyInstance } from 'fastify';
import {
  BODY_LIMIT_BYTES,
  frameworkErrorReply,
  SEED_CORS_HEADERS,
  seedFrameworkErrors,
} from '../../lib/http/error-form.ts';
import { observeHttpRequests } from '../../lib/http/metrics.ts';
import { type OpsServer, startOpsServer } from '../../lib/http/ops.ts';
import type { Logger } from '../../lib/logger.ts';
import type { GatewayConfig } from './config.ts';
import { registerConsole } from './console.ts';
import { createGatewayMetrics, gatewayReadiness } from './ops.ts';
import { createWsTunnel, type WsTunnel } from './ws-tunnel.ts';

export interface GatewayDeps {
  readonly config: GatewayConfig;
  readonly logger: Logger;
}

export interface Gateway {
  readonly app: FastifyInstance;
  readonly tunnel: WsTunnel;
  /** Listening port, once started. */
  readonly port: number;
  /** Port of /health, /ready, /metrics, once started. */
  readonly opsPort: number;
  start(): Promise<void>;
  /** Closes the listener, open HTTP streams and WebSocket tunnels. */
  stop(): Promise<void>;
}

/**
 * How long after the gateway's start an upstream that has not answered yet counts as still starting
 * (its failures logged at info), ms: a cold `npm start` on a slow machine takes tens of seconds.
 */
export const UPSTREAM_START_GRACE_MS = 120_000;

/** X-Forwarded-For/Host/Proto for an upstream, appending this hop. */
function forwarded(
  req: { readonly ip: string; readonly headers: IncomingHttpHeaders },
  headers: IncomingHttpHeaders,
): IncomingHttpHeaders {
  const prior = headers['x-forwarded-for'];
  const chain = Array.isArray(prior) ? prior.join(', ') : prior;
  return {
    ...headers,
    'x-forwarded-for': chain ? `${chain}, ${req.ip}` : req.ip,
    'x-forwarded-host': req.headers.host ?? '',
    'x-forwarded-proto': 'http',
  };
}

/** The part of a fastify reply that `unavailable` uses. */
interface ErrorReply {
  code(status: number): { header(name: string, value: string): { send(payload: unknown): unknown } };
}

export function buildGateway(deps: GatewayDeps): Gateway {
  const { host, port, opsPort, upstreams, consoleDir } = deps.config.gateway;
  const logger = deps.logger.child({ component: 'gateway' });
  // Streams (SSE, gRPC proxy) stay open for hours: no request timeout; forceCloseConnections ends
  // them on stop instead of waiting.
  // A malformed URL never reaches an upstream: the gateway answers it in the form of the path it
  // was meant for, as the API would (lib/http/error-form.ts).
  const app = Fastify({
    logger: false,
    requestTimeout: 0,
    forceCloseConnections: true,
    frameworkErrors: seedFrameworkErrors(),
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const r = frameworkErrorReply(err, req.url);
    if (r.status >= 500) logger.error({ err }, 'gateway request failed');
    reply.code(r.status).headers(SEED_CORS_HEADERS).type(r.contentType).send(r.body);
  });
  const tunnel = createWsTunnel(upstreams.edgeWs, '/ws/', deps.logger);
  const metrics = createGatewayMetrics(() => tunnel.open);
  observeHttpRequests(app, metrics.registry);
  // An unreachable or failing upstream is 502 (504 on a timeout) in the REST error shape, not
  // reply-from's default 500 with the socket error text. npm start starts the gateway beside the
  // services, so until an upstream has answered once (and for at most UPSTREAM_START_GRACE_MS) a
  // failure is that upstream still starting: logged at info, not as a warning.
  const startedAt = Date.now();
  const answered = new Set<string>();
  const replyOptionsFor = (upstream: string) => ({
    rewriteRequestHeaders: forwarded,
    onError: (reply: ErrorReply, { error }: { error: Error & { statusCode?: number } }) => {
      const status = error.statusCode === 504 ? 504 : 502;
      metrics.upstreamFailures.inc({ status: String(status) });
      const fields = { upstream, err: error.message, cause: (error.cause as Error | undefined)?.message };
      if (!answered.has(upstream) && Date.now() - startedAt < UPSTREAM_START_GRACE_MS)
        logger.info(fields, 'upstream not answering yet (still starting)');
      else logger.warn(fields, 'upstream failed');
      reply
        .code(status)
        .header('access-control-allow-origin', '*')
        .send({ error: status === 504 ? 'Upstream timed out' : 'Upstream unavailable', success: false });
    },
    // What reply-from does without this option (send the upstream's stream), noting that it answered.
    onResponse: (_req: unknown, reply: { send(payload: unknown): unknown }, res: { stream: unknown }) => {
      answered.add(upstream);
      reply.send(res.stream);
    },
  });
  // Before any body is read or proxied; a chunked body without Content-Length is left to the upstream.
  app.addHook('onRequest', async (req, reply) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (!(declared > BODY_LIMIT_BYTES)) return;
    const r = frameworkErrorReply(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), req.url);
    reply.header('connection', 'close');
    return reply.code(r.status).headers(SEED_CORS_HEADERS).type(r.contentType).send(r.body);
  });
  // A stream may be quiet for longer than undici's 300 s body timeout between chunks.
  const streaming = { bodyTimeout: 0 };

  // Public: no upstream address or socket path (those are on the ops port's /ready, which is not).
  app.get('/health', async () => ({ status: 'ok' }));
  app.register(proxy, {
    upstream: upstreams.edgeWs,
    prefix: '/ws',
    rewritePrefix: '/ws',
    replyOptions: replyOptionsFor('edge-ws'),
  });
  app.register(proxy, {
    upstream: upstreams.edgeHttp,
    prefix: '/sse',
    rewritePrefix: '/sse',
    replyOptions: replyOptionsFor('edge-http'),
    undici: streaming,
  });
  app.register(proxy, {
    upstream: upstreams.edgeHttp,
    prefix: '/grpc-proxy',
    rewritePrefix: '/grpc-proxy',
    replyOptions: replyOptionsFor('edge-http'),
    undici: streaming,
  });
  app.register(proxy, {
    upstream: upstreams.wtHttp,
    prefix: '/webtransport/cert-hash',
    rewritePrefix: '/cert-hash',
    replyOptions: replyOptionsFor('wt-http'),
  });
  // Served here, not proxied: the console's files never reach the API.
  registerConsole(app, consoleDir);
  // The API over its proxy socket when there is one: only there does it believe X-Forwarded-For.
  const apiUpstream = upstreams.apiSocket
    ? `unix+http://${encodeURIComponent(upstreams.apiSocket)}`
    : upstreams.api;
  app.register(proxy, { upstream: apiUpstream, prefix: '/', replyOptions: replyOptionsFor('api') });

  let listening = 0;
  let ops: OpsServer | undefined;
  const sockets = new Set<Socket>();
  app.server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  return {
    app,
    tunnel,
    get port() {
      return listening;
    },
    get opsPort() {
      return ops?.port ?? 0;
    },
    async start() {
      app.server.on('upgrade', tunnel.onUpgrade);
      await app.listen({ host, port });
      const addr = app.server.address();
      listening = typeof addr === 'object' && addr ? addr.port : port;
      ops = await startOpsServer({
        host,
        port: opsPort,
        registry: metrics.registry,
        ready: gatewayReadiness(upstreams, () => listening > 0),
      });
      logger.info({ port: listening, opsPort: ops.port, upstreams }, 'gateway started');
    },
    async stop() {
      tunnel.closeAll();
      listening = 0;
      const closed = app.close();
      // Every client socket goes now, upgraded or half-closed ones included (the HTTP server's own
      // forced close covers only sockets it still parses): a stop never waits on a client (once
      // the gateway outlived its 30 s bound with clients connected).
      for (const s of sockets) s.destroy();
      await closed;
      await ops?.close();
      logger.info('gateway stopped');
    },
  };
}
