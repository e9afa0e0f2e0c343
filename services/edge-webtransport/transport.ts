/**
 * The WebTransport transport: a QUIC listener speaking HTTP/3 on WT_PORT that
 * opens a session for `CONNECT https://{host}:4433/wt?game=<slug>|type=<type>` and refuses every
 * other request with a status before the session exists. Each open session is a hub subscriber.
 * The `token=` query parameter is the credential (access.ts, AUTH_REQUIRE_WT, default off; the
 * request's `origin` field for public keys), checked before the session exists: 401/403/429
 * refuse it; past the failed-credential budget of the peer's IP, 429 before any check. A session whose key is revoked or deleted is closed (code 1008, as WebSocket).
 * Shutdown stops accepting, then ends sessions spread over the drain window with a close capsule
 * (code 1001, as the WebSocket transport's "going away").
 */

import type { GuardedStreamAccess } from '../../lib/auth/failure-budget.ts';
import type { Principal } from '../../lib/auth/verifier.ts';
import type { Logger } from '../../lib/logger.ts';
import { HTTP_ERROR } from '../../lib/stream/access.ts';
import type { StreamCore } from '../../lib/stream/core.ts';
import { heartbeatEnvelope } from '../../lib/stream/envelope.ts';
import type { Selection } from '../../lib/stream/hub.ts';
import { ConnectionSubscriptions } from '../../lib/stream/multiplex.ts';
import { refusedPositionText, type StreamOptions } from '../../lib/stream/options.ts';
import type { ResumeDecision } from '../../lib/stream/resume.ts';
import { selectionLabel } from '../../lib/stream/selection.ts';
import type { CertificateInfo } from './cert.ts';
import {
  acceptWebTransport,
  H3_GENERAL_PROTOCOL_ERROR,
  H3_NO_ERROR,
  HandshakeError,
  type Verdict,
} from './handshake.ts';
import { readLines } from './lines.ts';
import { PROTOCOL, type WtMetrics } from './metrics.ts';
import { redactToken, routeOptions, routeWebTransport } from './route.ts';
import { WtSession } from './session.ts';
import type { WtConfig } from './settings.ts';
import { WtSink } from './sink.ts';

/** Close code of sessions ended by a shutdown (mirrors WebSocket 1001 "going away"). */
export const GOING_AWAY = 1001;
/** Close code of sessions whose key was revoked or deleted (mirrors WebSocket 1008 "policy"). */
export const REVOKED = 1008;
/** Server keep-alive and idle timeout, ms: a quiet game must not let the QUIC connection idle out. */
const KEEP_ALIVE_MS = 10_000;
const MAX_IDLE_MS = 30_000;
/** After a refusal, the connection stays this long so the response reaches the client, ms. */
const REFUSAL_GRACE_MS = 1_000;
/** Longest command line a client may send, bytes (as a WebSocket command frame). */
const MAX_COMMAND_BYTES = 1024;
/** Close code when a resume could not read the log (mirrors WebSocket 1011; the client retries). */
export const RESUME_FAILED = 1011;
/** Close code when the client's command stream broke the protocol (a line too long). */
export const BAD_COMMANDS = 1008;

export interface WtTransportDeps {
  readonly core: StreamCore;
  readonly metrics: WtMetrics;
  readonly logger: Logger;
  readonly wt: WtConfig['wt'];
  readonly certificate: Pick<CertificateInfo, 'certPem' | 'keyPem'>;
  /**
   * Credential checks (protocol `wt`) behind the failed-credential budget the API and the Node edge
   * apply too (lib/auth/failure-budget.ts): the client is the QUIC peer (no proxy in between).
   */
  readonly access: GuardedStreamAccess;
  /** Heartbeat period of envelope sessions, ms (EDGE_SSE_HEARTBEAT_MS). */
  readonly heartbeatMs: number;
}

export interface WtTransport {
  /** UDP port once listening. */
  readonly port: number;
  /** Open sessions. */
  readonly sessions: number;
  start(): Promise<void>;
  /** Stops accepting and ends open sessions spread over `drainMs`; resolves when all are closed. */
  stop(drainMs: number): Promise<void>;
}

export function createWtTransport(deps: WtTransportDeps): WtTransport {
  const { core, metrics, wt } = deps;
  const log = deps.logger.child({ component: 'webtransport' });
  let endpoint: Deno.QuicEndpoint | undefined;
  let listener: Deno.QuicListener | undefined;
  let port = 0;
  let stopping = false;
  const sessions = new Set<WtSession>();
  const handshaking = new Set<Deno.QuicConn>();

  const closeQuietly = (conn: Deno.QuicConn, code: number, reason: string) => {
    try {
      conn.close({ closeCode: code, reason });
    } catch {
      // already closed
    }
  };

  async function serve(conn: Deno.QuicConn, remote: string, client: string): Promise<void> {
    let selection: Selection | undefined;
    let options: StreamOptions | undefined;
    let decision: Exclude<ResumeDecision, { kind: 'refused' }> = { kind: 'fresh' };
    let principal: Principal | undefined;
    const decide = async (request: { path: string; origin: string | undefined }): Promise<Verdict> => {
      if (stopping) return { status: 503, error: 'The edge is shutting down' };
      if (sessions.size >= wt.maxSessions) return { status: 503, error: 'Too many WebTransport sessions' };
      const route = routeWebTransport(request.path);
      if (!route.ok) return route;
      const opted = routeOptions(request.path, route.selection);
      if (!opted.ok) return opted;
      const v = await deps.access.check(
        'wt',
        {
          credential: route.token,
          origin: request.origin,
          client,
          ...(route.selection ? { selection: route.selection } : { scope: 'stream:game' as const }),
        },
        Date.now(),
      );
      if (!v.ok) return { status: v.status, error: `${HTTP_ERROR[v.status]} (${v.reason})` };
      if (route.selection) {
        const d = await core.decide(route.selection, opted.options.since);
        if (d.kind === 'refused') {
          core.report(PROTOCOL, d);
          return { status: 400, error: refusedPositionText(d.reason) };
        }
        decision = d;
      }
      selection = route.selection;
      options = opted.options;
      principal = v.principal;
      return { status: 200 };
    };
    handshaking.add(conn);
    let result: Awaited<ReturnType<typeof acceptWebTransport>>;
    try {
      result = await acceptWebTransport(conn, decide, wt.handshakeTimeoutMs);
    } catch (err) {
      const reason = err instanceof HandshakeError ? err.reason : 'protocol';
      metrics.handshakeFailures.inc({ reason });
      log.info({ remote, err: (err as Error).message }, 'handshake failed');
      closeQuietly(conn, H3_GENERAL_PROTOCOL_ERROR, reason);
      return;
    } finally {
      handshaking.delete(conn);
    }
    metrics.sessionRequests.inc({ status: String(result.kind === 'accepted' ? 200 : result.status) });
    if (result.kind === 'refused') {
      const path = result.path === undefined ? undefined : redactToken(result.path);
      log.info({ remote, status: result.status, error: result.error, path }, 'session refused');
      setTimeout(() => closeQuietly(conn, H3_NO_ERROR, result.error), REFUSAL_GRACE_MS);
      return;
    }
    if (!options) throw new Error('accepted without options'); // decide() sets them before 200
    const { envelope, latest, lifecycle } = options;
    const session = new WtSession(
      conn,
      result.datagramPrefix,
      result.connectWriter,
      metrics,
      result.sessionId,
    );
    const subs: ConnectionSubscriptions = new ConnectionSubscriptions({
      core,
      protocol: PROTOCOL,
      principal,
      send: (text) => session.reliable.line(text),
      sink: () =>
        new WtSink(session, envelope, {
          metrics,
          resumeFailed: (sub, err) => {
            log.warn({ remote, selection: selectionLabel(sub.selection), err: err.message }, 'resume failed');
            if (envelope) subs.drop(sub, 503, 'Resume failed: the log cannot be read now; subscribe again');
            else void session.close(RESUME_FAILED, 'resume failed');
          },
        }),
    });
    if (selection) subs.adopt(selection, decision, { latest, lifecycle });
    if (envelope)
      result.peerStreams.take((id, reader) => {
        if (id !== result.sessionId) return void reader.cancel();
        readLines(reader, MAX_COMMAND_BYTES, (line) => subs.command(line)).catch((err: Error) => {
          log.info({ remote, err: err.message }, 'command stream refused');
          void session.close(BAD_COMMANDS, 'bad command stream');
        });
      });
    const beat = envelope
      ? setInterval(() => {
          for (const [name, sub] of subs.entries())
            if (sub.live) session.reliable.line(heartbeatEnvelope(name, sub.tracker.text()));
        }, deps.heartbeatMs)
      : undefined;
    const untrack = deps.access.track(
      principal,
      () => void session.close(REVOKED, 'credential revoked'),
      'wt',
    );
    sessions.add(session);
    metrics.subscribers.inc({ protocol: PROTOCOL });
    log.debug({ remote, selection: selection && selectionLabel(selection) }, 'session open');
    try {
      const end = await session.watch(result.connectReader);
      session.markClosed();
      log.debug({ remote, ...end }, 'session ended');
    } finally {
      clearInterval(beat);
      subs.closeAll();
      untrack();
      sessions.delete(session);
      metrics.subscribers.dec({ protocol: PROTOCOL });
      void result.keep; // the control and QPACK streams live as long as the connection
      const byServer = session.closingByServer;
      if (byServer) await byServer;
      else closeQuietly(conn, H3_NO_ERROR, 'session ended');
    }
  }

  /**
   * Accepts connections until stopped. Each failure is per connection (logged, then the loop goes
   * on), so one bad handshake never ends the listener. `QuicIncoming.remoteAddr` is read only on
   * the accepted connection: in Deno 2.9 reading it on the incoming invalidates it ("Invalid
   * QuicIncoming resource").
   */
  async function acceptLoop(l: Deno.QuicListener): Promise<void> {
    while (!stopping) {
      let incoming: Deno.QuicIncoming;
      try {
        incoming = await l.incoming();
      } catch (err) {
        if (stopping) return;
        log.warn({ err: (err as Error).message }, 'accepting a QUIC connection failed');
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      if (stopping) {
        incoming.refuse();
        return;
      }
      // Without 0-RTT the result is a promise; the type is a union because of the 0-RTT overload.
      Promise.resolve(incoming.accept())
        .then((conn) =>
          serve(conn, `${conn.remoteAddr.hostname}:${conn.remoteAddr.port}`, conn.remoteAddr.hostname),
        )
        .catch((err) => log.warn({ err: (err as Error).message }, 'QUIC connection failed'));
    }
  }

  return {
    get port() {
      return port;
    },
    get sessions() {
      return sessions.size;
    },
    async start() {
      endpoint = new Deno.QuicEndpoint({ hostname: wt.host, port: wt.port });
      listener = endpoint.listen({
        cert: deps.certificate.certPem,
        key: deps.certificate.keyPem,
        alpnProtocols: ['h3'],
        keepAliveInterval: KEEP_ALIVE_MS,
        maxIdleTimeout: MAX_IDLE_MS,
      });
      port = endpoint.addr.port;
      acceptLoop(listener).catch((err) => {
        if (!stopping) log.error({ err: (err as Error).message }, 'QUIC listener failed');
      });
    },
    async stop(drainMs) {
      stopping = true;
      listener?.stop();
      for (const conn of handshaking) closeQuietly(conn, H3_NO_ERROR, 'shutting down');
      const open = [...sessions];
      const step = open.length > 1 ? drainMs / open.length : 0;
      await Promise.all(
        open.map(
          (s, i) =>
            new Promise<void>((resolve) =>
              setTimeout(() => void s.close(GOING_AWAY, 'edge shutting down').finally(resolve), i * step),
            ),
        ),
      );
      endpoint?.close({ closeCode: H3_NO_ERROR, reason: 'shutting down' });
    },
  };
}
