/**
 * WebSocket transport on uWebSockets.js (docs/contract.md "Streams"):
 * `/ws/:game` and `/ws/type/:type`, one text frame per round holding the stream form, nothing
 * else sent unless the client opts in (lib/stream/options.ts):
 *
 * - `?since=<position>` resumes: the missed rounds (from memory or any point of the log, at the
 *   bounded catch-up rate) come before live ones, none twice. The 101 answer says whether the
 *   resume will be complete: `X-Stream-Recovered: true`, or `false` with `X-Stream-Recovered-Reason`
 *   for a fresh live start (a position ahead of the log). When the log cannot be read the socket is
 *   closed with 1011 "resume failed", so the client retries from the same position instead of
 *   living with a gap. A malformed, oversized or other-games position is refused with 400.
 * - `?latest=1`: the latest round of each game of the subscription first (SSE's `initial`).
 * - `?envelope=1`: every message is an envelope (lib/stream/envelope.ts) — `round` (with its
 *   position), `recovered`, `heartbeat` every EDGE_SSE_HEARTBEAT_MS, `error`, and with
 *   `lifecycle=1` `lifecycle` — and the client may add and remove subscriptions with commands
 *   (lib/stream/commands.ts), up to STREAM_MAX_SUBSCRIPTIONS; `/ws/` alone opens a connection
 *   with none yet.
 *
 * - The path and options are checked in the upgrade handler, so a bad one is answered with a
 *   plain HTTP status (400 malformed, 404 unknown) and no upgrade happens.
 * - The first requested subprotocol is the credential (docs/contract.md "Authentication" 3: a token per
 *   connection); it is checked before the upgrade (access.ts: 401/403/429 answered as HTTP, with
 *   Retry-After on 429) and echoed (browsers drop a connection whose requested subprotocol is not
 *   echoed). Without one, the upgrade passes only when AUTH_REQUIRE_WS is off. A socket opened with
 *   a key that is later revoked or deleted is closed with 1008 "credential revoked".
 * - Without envelopes, client messages are ignored (the protocol has none); a frame over
 *   `MAX_PAYLOAD_BYTES` closes the socket with 1009, one over 64 KiB is not read at all (uWS drops
 *   the connection, 1006). Neither affects other subscribers.
 * - Fan-out: a live subscription is on a uWS topic of its selection and wire
 *   form (lib/stream/shared.ts), so a round is one `app.publish` per topic, written to every socket
 *   by uWS's C++, a burst corked into one write per socket; catch-ups, `latest` rounds and other
 *   per-subscriber messages are sends of their own (subscriber.ts orders the switch).
 * - Backpressure: a socket whose unsent bytes pass `config.edge.wsMaxBufferBytes` gets nothing more,
 *   is counted and closed with 1008 "slow consumer" (connection.ts); a catch-up pauses from half of it.
 * - Shutdown: the listener closes first, then sockets get 1001 spread over the drain window.
 */

import { clientAddress, proxyTrust } from '../../../../lib/http/trust.ts';
import { HTTP_ERROR } from '../../../../lib/stream/access.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import { heartbeatEnvelope } from '../../../../lib/stream/envelope.ts';
import { ConnectionSubscriptions } from '../../../../lib/stream/multiplex.ts';
import { parseStreamOptions, queryOf, refusedPositionText } from '../../../../lib/stream/options.ts';
import type { ResumeDecision } from '../../../../lib/stream/resume.ts';
import { SharedTopics } from '../../../../lib/stream/shared.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { type SocketData, WsConnection, type WsShared } from './connection.ts';
import { pathSelection, reject, writeResumeHeaders } from './http.ts';
import { loadNativeUws, type Uws } from './uws.ts';

export { RESUME_FAILED_CLOSE, SLOW_CLOSE } from './connection.ts';

/** Largest client frame read, bytes: a command is small; without envelopes frames are ignored. */
export const MAX_PAYLOAD_BYTES = 1024;
/** Frames above this are not even read: uWS drops the connection (clients see 1006). */
const HARD_PAYLOAD_LIMIT_BYTES = 64 * 1024;
/** Close for a client frame over `MAX_PAYLOAD_BYTES` (RFC 6455 §7.4.1 "message too big"). */
export const TOO_BIG_CLOSE = { code: 1009, reason: 'client messages are not expected' } as const;
/** Close when the key the socket authenticated with is revoked or deleted (RFC 6455 §7.4.1: policy). */
export const REVOKED_CLOSE = { code: 1008, reason: 'credential revoked' } as const;
/** Close code and reason at shutdown (RFC 6455 "going away"; docs/contract.md lists 1001 for restarts). */
export const DRAIN_CLOSE = { code: 1001, reason: 'server shutting down' } as const;

/**
 * The WebSocket transport; its port is known after `start`.
 * @throws NativeUwsUnavailableError at once when uWebSockets.js does not load.
 */
export function createWsTransport(): Transport {
  const uws = loadNativeUws();
  let app: Uws.TemplatedApp | undefined;
  let listenSocket: Uws.us_listen_socket | undefined;
  let port: number | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let accepting = false;
  let topics: SharedTopics | undefined;
  const open = new Set<Uws.WebSocket<SocketData>>();

  return {
    name: 'ws',
    get port() {
      return port;
    },
    async start(ctx: EdgeContext) {
      const { config, metrics, core } = ctx;
      const log = ctx.logger.child({ component: 'edge-ws' });
      const trust = proxyTrust(ctx.config.edge.trustProxy, 'EDGE_TRUST_PROXY');
      const limit = config.edge.wsMaxBufferBytes;
      const subscribers = metrics.subscribers.labels('ws');
      const a = uws.App();
      app = a;
      const delivered = metrics.deliveryCount('ws');
      topics = new SharedTopics(
        core.hub,
        { publish: (t, text) => a.publish(t, text, false), members: (t) => a.numSubscribers(t) },
        (n) => delivered.add(n),
      );
      const shared: WsShared = {
        core,
        topics,
        limit,
        delivered,
        slowCloses: metrics.slowCloses.labels('ws'),
        log,
      };
      const envelopeSockets = new Set<WsConnection>();

      a.ws<SocketData>('/ws/*', {
        maxPayloadLength: HARD_PAYLOAD_LIMIT_BYTES,
        idleTimeout: config.edge.wsIdleTimeoutS,
        sendPingsAutomatically: true,
        // The edge's own limit: uWS checks it on every topic publish and reports a dropped
        // message, which makes the socket slow (connection.ts).
        maxBackpressure: limit,
        closeOnBackpressureLimit: false,
        dropped: (ws) => ws.getUserData().conn?.slowDown(true),
        drain: (ws) => ws.getUserData().conn?.drained(),
        upgrade: (res, req, context) => {
          // uWS's request object is only valid until this handler returns: copy what is needed.
          const url = req.getUrl();
          const query = req.getQuery() ?? '';
          const protocol = (req.getHeader('sec-websocket-protocol').split(',')[0] ?? '').trim();
          const key = req.getHeader('sec-websocket-key');
          const extensions = req.getHeader('sec-websocket-extensions');
          const origin = req.getHeader('origin') || undefined;
          // The client the failed-credential budget counts (EDGE_TRUST_PROXY, lib/http/trust.ts).
          const client = clientAddress(
            Buffer.from(res.getRemoteAddressAsText()).toString(),
            req.getHeader('x-forwarded-for') || undefined,
            trust,
          );
          const opted = parseStreamOptions(queryOf(`?${query}`));
          if (!opted.ok) return reject(res, 400, opted.error);
          const options = opted.options;
          if (options.lifecycle && !options.envelope)
            return reject(res, 400, 'lifecycle messages need envelope=1');
          const parsed = pathSelection(url, options);
          if (!parsed.ok) return reject(res, parsed.status, parsed.error);
          const selection = parsed.selection;
          if (!selection && options.since !== undefined)
            return reject(res, 400, 'since needs a subscription: give it in the subscribe command');
          let aborted = false;
          res.onAborted(() => {
            aborted = true;
          });
          const admit = async () => {
            const v = await ctx.access.check(
              'ws',
              {
                credential: protocol,
                origin,
                client,
                ...(selection ? { selection } : { scope: 'stream:game' as const }),
              },
              Date.now(),
            );
            if (!v.ok) return { v } as const;
            const decision: ResumeDecision = selection
              ? await core.decide(selection, options.since)
              : { kind: 'fresh' };
            return { v, decision } as const;
          };
          admit().then(
            ({ v, decision }) => {
              if (aborted) return;
              if (!v.ok) {
                log.info({ path: url, reason: v.reason }, 'WebSocket refused');
                return reject(res, v.status, HTTP_ERROR[v.status], v);
              }
              if (!decision || decision.kind === 'refused') {
                if (decision) core.report('ws', decision);
                return reject(res, 400, refusedPositionText(decision?.reason ?? 'refused'));
              }
              if (!accepting) return reject(res, 503, 'Shutting down');
              const data: SocketData = {
                selection,
                options,
                decision,
                protocol,
                principal: v.principal,
                closed: false,
                slow: false,
                // Declared here, so the object keeps them in place (no property array per socket).
                conn: undefined,
                untrack: undefined,
              };
              res.cork(() => {
                writeResumeHeaders(res, options.since, decision);
                res.upgrade(data, key, protocol, extensions, context);
              });
            },
            (err: unknown) => {
              log.error({ err }, 'credential check failed');
              if (!aborted) reject(res, 400, 'Bad Request');
            },
          );
        },
        open: (ws) => {
          const conn = new WsConnection(ws, shared);
          const { data } = conn;
          data.conn = conn;
          if (data.principal)
            data.untrack = ctx.access.track(
              data.principal,
              () => {
                if (!data.closed) ws.end(REVOKED_CLOSE.code, REVOKED_CLOSE.reason);
              },
              'ws',
            );
          open.add(ws);
          subscribers.inc();
          conn.subs = new ConnectionSubscriptions(conn);
          if (data.options.envelope) envelopeSockets.add(conn);
          if (data.selection)
            conn.subs.adopt(data.selection, data.decision, {
              latest: data.options.latest,
              lifecycle: data.options.lifecycle,
            });
        },
        message: (ws, message) => {
          // Without envelopes the stream protocol has no client messages:
          // small ones are ignored; larger ones end the connection with a defined code.
          if (message.byteLength > MAX_PAYLOAD_BYTES) return ws.end(TOO_BIG_CLOSE.code, TOO_BIG_CLOSE.reason);
          const { conn } = ws.getUserData();
          // The message's memory is only valid during this call: decode it now.
          if (conn?.data.options.envelope) void conn.subs?.command(Buffer.from(message).toString('utf8'));
        },
        close: (ws) => {
          const data = ws.getUserData();
          data.closed = true;
          data.conn?.subs?.closeAll();
          data.untrack?.();
          if (data.conn) envelopeSockets.delete(data.conn);
          if (open.delete(ws)) subscribers.dec();
        },
      });
      heartbeat = setInterval(() => {
        for (const conn of envelopeSockets) {
          for (const [name, sub] of conn.subs?.entries() ?? [])
            if (sub.live) conn.send(heartbeatEnvelope(name, sub.positionText()));
        }
      }, config.edge.sseHeartbeatMs);
      heartbeat.unref();
      // A plain GET on a stream path (no upgrade) and every other path.
      a.get('/ws/*', (res) => reject(res, 426, 'WebSocket upgrade required'));
      a.any('/*', (res) => reject(res, 404, 'Not found'));

      await new Promise<void>((resolve, reject) => {
        a.listen(config.edge.host, config.edge.wsPort, (s) => {
          if (!s) {
            reject(new Error(`WebSocket listener could not bind ${config.edge.host}:${config.edge.wsPort}`));
            return;
          }
          listenSocket = s;
          port = uws.us_socket_local_port(s);
          resolve();
        });
      });
      accepting = true;
      log.info({ port, maxBufferBytes: limit }, 'WebSocket listening');
    },
    async stop(drainMs: number) {
      accepting = false;
      if (heartbeat) clearInterval(heartbeat);
      if (!app) return;
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      await closeSpread([...open], drainMs, (ws) => {
        if (!ws.getUserData().closed) ws.end(DRAIN_CLOSE.code, DRAIN_CLOSE.reason);
      });
      // Forces whatever is left (HTTP keep-alive connections, unanswered closing handshakes);
      // `close` exists in this build but is missing from its type declarations.
      (app as Uws.TemplatedApp & { close(): void }).close();
      app = undefined;
      topics?.close();
      topics = undefined;
    },
  };
}
