/**
 * WebSocket transport on uWebSockets.js (issue 3, item 2; seed 000 "Live streams"):
 * `/ws/:game` and `/ws/type/:type`, one text frame per round holding the stream form, nothing
 * else sent.
 *
 * - The path is checked in the upgrade handler, so a bad one is answered with a plain HTTP
 *   status (400 malformed, 404 unknown) and no upgrade happens.
 * - The first requested subprotocol is the credential (seed 000 "Authentication" 3: a token per
 *   connection); it is checked before the upgrade (access.ts: 401/403/429 answered as HTTP, with
 *   Retry-After on 429) and echoed (browsers drop a connection whose requested subprotocol is not
 *   echoed). Without one, the upgrade passes only when AUTH_REQUIRE_WS is off. A socket opened with
 *   a key that is later revoked or deleted is closed with 1008 "credential revoked".
 * - Client messages are ignored (the protocol has none); a frame over `MAX_PAYLOAD_BYTES` closes
 *   the socket with 1009, one over 64 KiB is not read at all (uWS drops the connection, 1006).
 *   Neither affects other subscribers.
 * - Backpressure: a socket whose unsent bytes pass `config.edge.wsMaxBufferBytes` is closed with
 *   1008 "slow consumer" and counted; memory per socket stays bounded.
 * - Shutdown: the listener closes first, then sockets get 1001 spread over the drain window.
 */

import type { Principal } from '../../../../lib/auth/verifier.ts';
import { MALFORMED_URL_TEXT } from '../../../../lib/http/error-form.ts';
import { HTTP_ERROR } from '../../../../lib/stream/access.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import type { Delivery, Selection, Subscription } from '../../../../lib/stream/hub.ts';
import { parseStreamPath, type SelectionResult, selectionLabel } from '../../../../lib/stream/selection.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { loadNativeUws, type Uws } from './uws.ts';

/** Largest client frame ignored, bytes; clients have nothing to send, so small. */
export const MAX_PAYLOAD_BYTES = 1024;
/** Frames above this are not even read: uWS drops the connection (clients see 1006). */
const HARD_PAYLOAD_LIMIT_BYTES = 64 * 1024;
/** Close for a client frame over `MAX_PAYLOAD_BYTES` (RFC 6455 §7.4.1 "message too big"). */
export const TOO_BIG_CLOSE = { code: 1009, reason: 'client messages are not expected' } as const;
/** Close code and reason for a subscriber over the buffer limit (RFC 6455 §7.4.1: policy). */
export const SLOW_CLOSE = { code: 1008, reason: 'slow consumer' } as const;
/** Close when the key the socket authenticated with is revoked or deleted (RFC 6455 §7.4.1: policy). */
export const REVOKED_CLOSE = { code: 1008, reason: 'credential revoked' } as const;
/** Close code and reason at shutdown (RFC 6455 "going away"; seed 000 lists 1001 for restarts). */
export const DRAIN_CLOSE = { code: 1001, reason: 'server shutting down' } as const;

interface SocketData {
  readonly selection: Selection;
  /** The first requested subprotocol (the token, once access control checks it); '' when none. */
  readonly protocol: string;
  readonly principal: Principal | undefined;
  closed: boolean;
  unsubscribe?: () => void;
  untrack?: () => void;
}

const STATUS_TEXT = {
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
} as const;

function reject(
  res: Uws.HttpResponse,
  status: keyof typeof STATUS_TEXT,
  error: string,
  extra: { reason?: string; retryAfterS?: number } = {},
): void {
  res.cork(() => {
    res
      .writeStatus(STATUS_TEXT[status])
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('Access-Control-Allow-Origin', '*');
    if (extra.retryAfterS !== undefined) res.writeHeader('Retry-After', String(extra.retryAfterS));
    const reason = extra.reason === undefined ? {} : { reason: extra.reason };
    res.end(JSON.stringify({ error, success: false, ...reason }));
  });
}

/**
 * The selection of a `/ws/…` path as the API reads a path parameter (issue 13 item 5): uWS gives
 * the raw path, so each segment is percent-decoded first (`%63rash` is crash; a `%2F` stays inside
 * its segment, making it a malformed slug); a bad percent-encoding is 400 as on every listener.
 */
function streamPathOf(url: string): SelectionResult {
  try {
    const segments = url
      .slice('/ws/'.length)
      .split('/')
      .map((s) => decodeURIComponent(s).replaceAll('/', '%2F'));
    return parseStreamPath(segments.join('/'));
  } catch {
    return { ok: false, status: 400, error: MALFORMED_URL_TEXT };
  }
}

/**
 * The WebSocket transport; its port is known after `start`.
 * @throws NativeUwsUnavailableError at once when only uWS's pure-JS fallback would load.
 */
export function createWsTransport(): Transport {
  const uws = loadNativeUws();
  let app: Uws.TemplatedApp | undefined;
  let listenSocket: Uws.us_listen_socket | undefined;
  let port: number | undefined;
  const open = new Set<Uws.WebSocket<SocketData>>();

  return {
    name: 'ws',
    get port() {
      return port;
    },
    async start(ctx: EdgeContext) {
      const { config, hub, metrics } = ctx;
      const log = ctx.logger.child({ component: 'edge-ws' });
      const limit = config.edge.wsMaxBufferBytes;
      const subscribers = metrics.subscribers.labels('ws');
      const delivered = metrics.deliveries.labels('ws');
      const slow = metrics.slowCloses.labels('ws');
      const a = uws.App();
      app = a;

      const sendTo = (ws: Uws.WebSocket<SocketData>, d: Delivery) => {
        const data = ws.getUserData();
        if (data.closed) return;
        if (ws.getBufferedAmount() > limit) {
          slow.inc();
          log.warn(
            { selection: selectionLabel(data.selection), buffered: ws.getBufferedAmount() },
            'slow consumer closed',
          );
          ws.end(SLOW_CLOSE.code, SLOW_CLOSE.reason);
          return;
        }
        // Corked: this runs from the Kafka callback, outside uWS's own loop.
        ws.cork(() => ws.send(d.streamJson(data.selection), false));
        delivered.inc();
      };

      a.ws<SocketData>('/ws/*', {
        maxPayloadLength: HARD_PAYLOAD_LIMIT_BYTES,
        idleTimeout: config.edge.wsIdleTimeoutS,
        sendPingsAutomatically: true,
        // Above the edge's own limit (plus one frame of headroom), so uWS never drops a round
        // silently; should it ever be reached, uWS closes instead of dropping.
        maxBackpressure: limit + 256 * 1024,
        closeOnBackpressureLimit: true,
        upgrade: (res, req, context) => {
          const parsed = streamPathOf(req.getUrl());
          if (!parsed.ok) {
            reject(res, parsed.status, parsed.error);
            return;
          }
          const protocol = (req.getHeader('sec-websocket-protocol').split(',')[0] ?? '').trim();
          // uWS's request object is only valid until this handler returns: copy what is needed.
          const key = req.getHeader('sec-websocket-key');
          const extensions = req.getHeader('sec-websocket-extensions');
          const origin = req.getHeader('origin') || undefined;
          const selection = parsed.selection;
          let aborted = false;
          res.onAborted(() => {
            aborted = true;
          });
          ctx.access.check('ws', { credential: protocol, origin, selection }, Date.now()).then(
            (v) => {
              if (aborted) return;
              if (!v.ok) {
                log.info({ selection: selectionLabel(selection), reason: v.reason }, 'WebSocket refused');
                reject(res, v.status, HTTP_ERROR[v.status], v);
                return;
              }
              const data: SocketData = { selection, protocol, principal: v.principal, closed: false };
              res.cork(() => res.upgrade(data, key, protocol, extensions, context));
            },
            (err: unknown) => {
              log.error({ err }, 'credential check failed');
              if (!aborted) reject(res, 400, 'Bad Request');
            },
          );
        },
        open: (ws) => {
          const data = ws.getUserData();
          data.untrack = ctx.access.track(
            data.principal,
            () => {
              if (!data.closed) ws.end(REVOKED_CLOSE.code, REVOKED_CLOSE.reason);
            },
            'ws',
          );
          open.add(ws);
          subscribers.inc();
          const sub: Subscription = { selection: data.selection, deliver: (d) => sendTo(ws, d) };
          data.unsubscribe = hub.subscribe(sub);
        },
        message: (ws, message) => {
          // The stream protocol has no client messages (issue 3 "Bad input"): small ones are
          // ignored, larger ones end the connection with a defined code.
          if (message.byteLength > MAX_PAYLOAD_BYTES) ws.end(TOO_BIG_CLOSE.code, TOO_BIG_CLOSE.reason);
        },
        close: (ws) => {
          const data = ws.getUserData();
          data.closed = true;
          data.unsubscribe?.();
          data.untrack?.();
          if (open.delete(ws)) subscribers.dec();
        },
      });
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
      log.info({ port, maxBufferBytes: limit }, 'WebSocket listening');
    },
    async stop(drainMs: number) {
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
    },
  };
}
