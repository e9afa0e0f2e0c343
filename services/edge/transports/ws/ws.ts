/**
 * WebSocket transport on uWebSockets.js (issue 3, item 2; seed 000 "Live streams"):
 * `/ws/:game` and `/ws/type/:type`, one text frame per round holding the stream form, nothing
 * else sent unless the client opts in (issue 15, lib/stream/options.ts):
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
 * - The first requested subprotocol is the credential (seed 000 "Authentication" 3: a token per
 *   connection); it is checked before the upgrade (access.ts: 401/403/429 answered as HTTP, with
 *   Retry-After on 429) and echoed (browsers drop a connection whose requested subprotocol is not
 *   echoed). Without one, the upgrade passes only when AUTH_REQUIRE_WS is off. A socket opened with
 *   a key that is later revoked or deleted is closed with 1008 "credential revoked".
 * - Without envelopes, client messages are ignored (the protocol has none); a frame over
 *   `MAX_PAYLOAD_BYTES` closes the socket with 1009, one over 64 KiB is not read at all (uWS drops
 *   the connection, 1006). Neither affects other subscribers.
 * - Backpressure: a socket whose unsent bytes pass `config.edge.wsMaxBufferBytes` is closed with
 *   1008 "slow consumer" and counted; a catch-up pauses from half of it.
 * - Shutdown: the listener closes first, then sockets get 1001 spread over the drain window.
 */

import type { Principal } from '../../../../lib/auth/verifier.ts';
import { HTTP_ERROR } from '../../../../lib/stream/access.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import { heartbeatEnvelope } from '../../../../lib/stream/envelope.ts';
import type { Selection } from '../../../../lib/stream/hub.ts';
import { ConnectionSubscriptions } from '../../../../lib/stream/multiplex.ts';
import {
  parseStreamOptions,
  queryOf,
  refusedPositionText,
  type StreamOptions,
} from '../../../../lib/stream/options.ts';
import type { ResumeDecision } from '../../../../lib/stream/resume.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { pathSelection, reject, writeResumeHeaders } from './http.ts';
import { WsSink } from './sink.ts';
import { loadNativeUws, type Uws } from './uws.ts';

/** Largest client frame read, bytes: a command is small; without envelopes frames are ignored. */
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
/** Close when a resume could not read the log (RFC 6455 §7.4.1: server error; the client retries). */
export const RESUME_FAILED_CLOSE = { code: 1011, reason: 'resume failed' } as const;

interface SocketData {
  /** The subscription the path names; undefined for `/ws/` (envelope commands only). */
  readonly selection: Selection | undefined;
  readonly options: StreamOptions;
  /** The path subscription's resume decision (made before the upgrade). */
  readonly decision: Exclude<ResumeDecision, { kind: 'refused' }>;
  /** The first requested subprotocol (the token, once access control checks it); '' when none. */
  readonly protocol: string;
  readonly principal: Principal | undefined;
  closed: boolean;
  subs?: ConnectionSubscriptions;
  untrack?: () => void;
}

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
  const open = new Set<Uws.WebSocket<SocketData>>();

  return {
    name: 'ws',
    get port() {
      return port;
    },
    async start(ctx: EdgeContext) {
      const { config, metrics } = ctx;
      const log = ctx.logger.child({ component: 'edge-ws' });
      const limit = config.edge.wsMaxBufferBytes;
      const subscribers = metrics.subscribers.labels('ws');
      const delivered = metrics.deliveries.labels('ws');
      const slow = metrics.slowCloses.labels('ws');
      const a = uws.App();
      app = a;

      const { core } = ctx;
      const envelopeSockets = new Set<Uws.WebSocket<SocketData>>();

      const closeSlow = (ws: Uws.WebSocket<SocketData>) => {
        const data = ws.getUserData();
        if (data.closed) return;
        slow.inc();
        log.warn(
          { selection: data.selection && selectionLabel(data.selection), buffered: ws.getBufferedAmount() },
          'slow consumer closed',
        );
        ws.end(SLOW_CLOSE.code, SLOW_CLOSE.reason);
      };

      const sendTo = (ws: Uws.WebSocket<SocketData>, text: string) => {
        if (ws.getUserData().closed) return;
        if (ws.getBufferedAmount() > limit) return closeSlow(ws);
        // Corked: this runs from the Kafka callback, outside uWS's own loop.
        ws.cork(() => ws.send(text, false));
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
          // uWS's request object is only valid until this handler returns: copy what is needed.
          const url = req.getUrl();
          const query = req.getQuery() ?? '';
          const protocol = (req.getHeader('sec-websocket-protocol').split(',')[0] ?? '').trim();
          const key = req.getHeader('sec-websocket-key');
          const extensions = req.getHeader('sec-websocket-extensions');
          const origin = req.getHeader('origin') || undefined;
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
          const { envelope } = data.options;
          const subs: ConnectionSubscriptions = new ConnectionSubscriptions({
            core,
            protocol: 'ws',
            principal: data.principal,
            send: (text) => sendTo(ws, text),
            sink: () =>
              new WsSink(
                {
                  send: (text) => sendTo(ws, text),
                  delivered: () => delivered.inc(),
                  cork: (run) => {
                    if (data.closed) run();
                    else ws.cork(run);
                  },
                  buffered: () => (data.closed ? 0 : ws.getBufferedAmount()),
                  get closed() {
                    return data.closed;
                  },
                  closeSlow: () => closeSlow(ws),
                  resumeFailed: (sub, err) => {
                    log.warn({ selection: selectionLabel(sub.selection), err: err.message }, 'resume failed');
                    if (envelope)
                      subs.drop(sub, 503, 'Resume failed: the log cannot be read now; subscribe again');
                    else if (!data.closed) ws.end(RESUME_FAILED_CLOSE.code, RESUME_FAILED_CLOSE.reason);
                  },
                },
                envelope,
                limit / 2,
              ),
          });
          data.subs = subs;
          if (envelope) envelopeSockets.add(ws);
          if (data.selection)
            subs.adopt(data.selection, data.decision, {
              latest: data.options.latest,
              lifecycle: data.options.lifecycle,
            });
        },
        message: (ws, message) => {
          // Without envelopes the stream protocol has no client messages (issue 3 "Bad input"):
          // small ones are ignored; larger ones end the connection with a defined code.
          if (message.byteLength > MAX_PAYLOAD_BYTES) return ws.end(TOO_BIG_CLOSE.code, TOO_BIG_CLOSE.reason);
          const data = ws.getUserData();
          // The message's memory is only valid during this call: decode it now.
          if (data.options.envelope) void data.subs?.command(Buffer.from(message).toString('utf8'));
        },
        close: (ws) => {
          const data = ws.getUserData();
          data.closed = true;
          data.subs?.closeAll();
          data.untrack?.();
          envelopeSockets.delete(ws);
          if (open.delete(ws)) subscribers.dec();
        },
      });
      heartbeat = setInterval(() => {
        for (const ws of envelopeSockets) {
          for (const [name, sub] of ws.getUserData().subs?.entries() ?? [])
            if (sub.live) sendTo(ws, heartbeatEnvelope(name, sub.tracker.text()));
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
    },
  };
}
