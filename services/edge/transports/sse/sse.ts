/**
 * SSE transport with better-sse on the edge's fastify server (issue 3, item 3; seed 000 "SSE"):
 * `/sse/:game` and `/sse/type/:type`.
 *
 * - Headers of the seed: Content-Type text/event-stream, Cache-Control no-cache, Connection
 *   keep-alive (Transfer-Encoding chunked comes from HTTP/1.1), plus `Access-Control-Allow-Origin: *`
 *   so a page on another origin can use EventSource.
 * - A fresh subscriber gets `event: initial` with the newest round of its subscription (for a type,
 *   the newest of its games; nothing when no round is known yet), then `event: message` per round.
 *   Every event has a resumable id (event-id.ts).
 * - A reconnect with a valid Last-Event-ID (header, or `lastEventId` query parameter for clients
 *   that cannot set headers) gets the missed rounds as `message` events, then live ones, none
 *   twice, and no `initial` (it would repeat a round). A malformed id, one naming rounds this
 *   edge has not seen (after waiting up to `RESUME_CATCH_UP_MS` for them) or a time in the future,
 *   or one older than `RESUME_WINDOW_MS` is ignored:
 *   the stream starts live with `initial`, so a bad id can never cause a reconnect loop.
 * - `: heartbeat` comment every `config.edge.sseHeartbeatMs` (15 s, seed "Limits").
 * - Unsent bytes past `config.edge.sseMaxBufferBytes` close the stream (subscriber.ts).
 * - Credential (seed 000 "Authentication" 4): `X-API-Key` (or `Authorization: Bearer`), else the
 *   `api_key` or `token` query parameter (EventSource cannot set headers); checked by access.ts
 *   before the stream opens (401/403/429 as JSON, Retry-After on 429). Origin: the header, else the
 *   Referer's origin (a same-origin EventSource sends no Origin). Required only when
 *   AUTH_REQUIRE_SSE is on; a stream whose key is revoked or deleted is ended.
 */
import { once } from 'node:events';
import { createEventBuffer, Session } from 'better-sse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { credentialFromHeaders } from '../../../../lib/auth/credentials.ts';
import { topicName } from '../../../../lib/log/topics.ts';
import { HTTP_ERROR, requestOrigin } from '../../../../lib/stream/access.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import type { FanOutHub, Selection } from '../../../../lib/stream/hub.ts';
import {
  parseGameSelection,
  parseTypeSelection,
  type SelectionResult,
  selectionLabel,
} from '../../../../lib/stream/selection.ts';
import type { GameSlug } from '../../../../rules/games/catalog.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { type Position, parseEventId } from './event-id.ts';
import { RecentRounds, readMissed } from './resume.ts';
import { SseSubscriber, sanitizer } from './subscriber.ts';

/** Oldest Last-Event-ID time honoured, ms before now; older ones start live (bounded catch-up). */
export const RESUME_WINDOW_MS = 3_600_000;
/**
 * How long a resume whose id names rounds this edge has not published yet waits for them, ms.
 * Edges read the log independently, so a client failing over from an edge a few ms ahead (a
 * rolling restart) names rounds this one is about to publish; ignoring the id would cost it rounds.
 */
export const RESUME_CATCH_UP_MS = 2_000;
/** Clock skew tolerated before an id's time counts as future, ms. */
const FUTURE_TOLERANCE_MS = 60_000;
/** Reconnection delay suggested to EventSource clients, ms. */
const RETRY_MS = 2_000;
const CORS = { 'Access-Control-Allow-Origin': '*' } as const;

/** The first round `p` names that the hub has not published yet, if any. */
function unseenRound(hub: FanOutHub, p: Position): [GameSlug, number] | undefined {
  for (const [slug, rid] of p.last) {
    const known = hub.latest({ kind: 'game', slug })[0]?.round.round_id;
    if (known === undefined || rid > known) return [slug, rid];
  }
  return undefined;
}

/**
 * A Last-Event-ID worth resuming from, or why not; `unseen` when the only objection is rounds the
 * hub has not published yet (worth waiting for: awaitNamedRounds).
 */
export function resumePosition(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  now: number,
): { position?: Position; ignored?: string; unseen?: true } {
  if (raw === undefined || raw === '') return {};
  const parsed = parseEventId(selection, raw);
  if (!parsed.ok) return { ignored: `malformed (${parsed.reason})` };
  const p = parsed.position;
  if (p.t > now + FUTURE_TOLERANCE_MS) return { ignored: 'time in the future' };
  if (p.t < now - RESUME_WINDOW_MS) return { ignored: 'older than the resume window' };
  const unseen = unseenRound(hub, p);
  if (unseen) return { ignored: `round ${unseen[1]} of ${unseen[0]} not seen by this edge`, unseen: true };
  return { position: p };
}

/**
 * Waits until the hub has published every round the id `raw` names, polling every 20 ms for at
 * most `timeoutMs` ms.
 * @returns true when they are all published (at once when the id names none), false on timeout or
 *   a malformed id.
 */
export async function awaitNamedRounds(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  timeoutMs: number,
): Promise<boolean> {
  if (raw === undefined || raw === '') return true;
  const parsed = parseEventId(selection, raw);
  if (!parsed.ok) return false;
  const deadline = Date.now() + timeoutMs;
  while (unseenRound(hub, parsed.position)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** The stream's credential: header first, then `api_key`, then `token`; undefined when none. */
export function sseCredentialOf(req: FastifyRequest): string | undefined {
  const h = credentialFromHeaders(req.headers);
  if (h !== undefined) return h;
  const q = req.query as Record<string, unknown>;
  for (const name of ['api_key', 'token']) {
    const v = q[name];
    if (typeof v === 'string' && v !== '') return v;
    if (Array.isArray(v)) return String(v.at(-1) ?? '');
  }
  return undefined;
}

function lastEventIdOf(req: FastifyRequest): string | undefined {
  const h = req.headers['last-event-id'];
  if (typeof h === 'string') return h;
  const q = (req.query as Record<string, unknown>).lastEventId;
  return typeof q === 'string' ? q : undefined;
}

/** The SSE transport (routes on the edge's HTTP server). */
export function createSseTransport(): Transport {
  const open = new Set<SseSubscriber>();
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribeRecent: (() => void) | undefined;
  let accepting = false;

  return {
    name: 'sse',
    async start(ctx: EdgeContext) {
      const { hub, config, metrics, kafka } = ctx;
      const log = ctx.logger.child({ component: 'edge-sse' });
      const topic = topicName(config, 'rounds');
      const gauge = metrics.subscribers.labels('sse');
      const delivered = metrics.deliveries.labels('sse');
      const slow = metrics.slowCloses.labels('sse');
      const recent = new RecentRounds();
      for (const d of hub.latest({ kind: 'all' })) recent.deliver(d);
      unsubscribeRecent = hub.subscribe(recent);
      accepting = true;

      const stream = async (req: FastifyRequest, reply: FastifyReply, parsed: SelectionResult) => {
        if (!parsed.ok)
          return reply.code(parsed.status).headers(CORS).send({ error: parsed.error, success: false });
        if (!accepting) return reply.code(503).headers(CORS).send({ error: 'Shutting down', success: false });
        const selection = parsed.selection;
        const origin = requestOrigin(req.headers);
        const verdict = await ctx.access.check(
          'sse',
          { credential: sseCredentialOf(req), origin, selection },
          Date.now(),
        );
        if (!verdict.ok) {
          log.info({ selection: selectionLabel(selection), reason: verdict.reason }, 'SSE refused');
          if (verdict.retryAfterS !== undefined) reply.header('Retry-After', String(verdict.retryAfterS));
          return reply
            .code(verdict.status)
            .headers(CORS)
            .send({ error: HTTP_ERROR[verdict.status], success: false, reason: verdict.reason });
        }
        const label = selectionLabel(selection);
        const rawId = lastEventIdOf(req);
        let { position, ignored, unseen } = resumePosition(hub, selection, rawId, Date.now());
        if (unseen && (await awaitNamedRounds(hub, selection, rawId, RESUME_CATCH_UP_MS)))
          ({ position, ignored } = resumePosition(hub, selection, rawId, Date.now()));
        // The checks above may have waited; a drain that began meanwhile must not miss this stream.
        if (!accepting) return reply.code(503).headers(CORS).send({ error: 'Shutting down', success: false });
        const now = Date.now();
        if (ignored) log.info({ selection: label, reason: ignored }, 'Last-Event-ID ignored; starting live');

        const latest = hub.latest(selection);
        const fresh: Position & { at: Map<GameSlug, number> } = {
          t: now,
          last: new Map(latest.map((d) => [d.round.game_slug, d.round.round_id])),
          at: new Map(latest.map((d) => [d.round.game_slug, d.appendedAt])),
        };
        reply.hijack();
        const session = new Session(req.raw, reply.raw, {
          headers: { 'Cache-Control': 'no-cache', ...CORS },
          keepAlive: null,
          retry: RETRY_MS,
          trustClientEventId: false,
          sanitizer,
          serializer: String,
        });
        const sub = new SseSubscriber(selection, position ?? fresh, session, reply.raw, {
          limitBytes: config.edge.sseMaxBufferBytes,
          onDelivered: () => delivered.inc(),
          onSlow: (buffered) => {
            slow.inc();
            log.warn({ selection: label, buffered }, 'slow consumer closed');
          },
        });
        // Subscribed before anything is read or sent: rounds arriving meanwhile are held, not lost.
        const unsubscribe = hub.subscribe(sub);
        const untrack = ctx.access.track(verdict.principal, () => sub.end(), 'sse');
        open.add(sub);
        gauge.inc();
        session.once('disconnected', () => {
          sub.disconnected();
          unsubscribe();
          untrack();
          if (open.delete(sub)) gauge.dec();
        });
        await once(session, 'connected');
        if (!position) {
          const newest = latest[latest.length - 1];
          if (newest) sub.send(newest, 'initial');
          sub.goLive();
          return;
        }
        try {
          let missed = recent.since(selection, position);
          if (missed) metrics.sseResumes.inc({ source: 'memory' });
          else {
            missed = await readMissed(kafka, topic, selection, position, log);
            metrics.sseResumes.inc({ source: 'log' });
          }
          await sub.catchUp(missed);
        } catch (err) {
          // The log is unreachable: say so and go on live rather than loop on reconnects.
          metrics.sseResumes.inc({ source: 'failed' });
          log.error({ selection: label, err: (err as Error).message }, 'resume read failed; continuing live');
        }
        sub.goLive();
      };

      ctx.http.get<{ Params: { type: string } }>('/sse/type/:type', (req, reply) =>
        stream(req, reply, parseTypeSelection(req.params.type)),
      );
      ctx.http.get<{ Params: { game: string } }>('/sse/:game', (req, reply) =>
        stream(req, reply, parseGameSelection(req.params.game)),
      );
      // Preflight for fetch-based SSE clients that send headers (Last-Event-ID, a key).
      ctx.http.options('/sse/*', async (_req, reply) =>
        reply
          .code(204)
          .headers({
            ...CORS,
            'Access-Control-Allow-Methods': 'GET, OPTIONS',
            'Access-Control-Allow-Headers': 'Content-Type, Last-Event-ID, X-API-Key, Authorization',
            'Access-Control-Max-Age': '600',
          })
          .send(),
      );

      const beat = createEventBuffer({ sanitizer }).comment('heartbeat').dispatch();
      heartbeat = setInterval(() => {
        for (const s of open) s.writeRaw(beat);
      }, config.edge.sseHeartbeatMs);
      heartbeat.unref();
      log.info(
        { heartbeatMs: config.edge.sseHeartbeatMs, maxBufferBytes: config.edge.sseMaxBufferBytes },
        'SSE ready',
      );
    },
    async stop(drainMs: number) {
      accepting = false;
      if (heartbeat) clearInterval(heartbeat);
      await closeSpread([...open], drainMs, (s) => s.end());
      unsubscribeRecent?.();
    },
  };
}
