/**
 * SSE transport with better-sse on the edge's fastify server (docs/contract.md "Streaming endpoints"):
 * `/sse/:game` and `/sse/type/:type`, and `/sse/all` (every game; not in the seed: a page that
 * shows every game needs one connection instead of three, browsers allowing six per host).
 *
 * - Headers of the seed: Content-Type text/event-stream, Cache-Control no-cache, Connection
 *   keep-alive (Transfer-Encoding chunked comes from HTTP/1.1), plus `Access-Control-Allow-Origin: *`
 *   so a page on another origin can use EventSource.
 * - A fresh subscriber gets `event: initial` with the newest round of its subscription (for a type,
 *   the newest of its games; nothing when no round is known yet), then `event: message` per round.
 *   Every event has an id: the subscriber's position (lib/stream/position.ts), the same text as
 *   every other protocol's.
 * - Resume: a reconnect with a Last-Event-ID (header, or `lastEventId` query parameter
 *   for clients that cannot set headers), or a first connection with `?since=<position>`, gets the
 *   missed rounds as `message` events, from memory or from any point of the log at the bounded
 *   catch-up rate, then live ones, none twice, and no `initial`. A Last-Event-ID that is malformed,
 *   names rounds this edge has not seen (after waiting up to `RESUME_CATCH_UP_MS`) or a time in the
 *   future is ignored: the stream starts live with `initial`, so a bad id can never cause a
 *   reconnect loop. A malformed, oversized or other-games `since` is refused with 400. When the log
 *   cannot be read the stream ends, and EventSource resumes from its last id.
 * - Opt-ins (lib/stream/options.ts): `envelope=1` adds `event: recovered` (data `{recovered, since,
 *   replayed, reason?}`) before the first live round; `lifecycle=1` adds `event: round-opened` and
 *   `event: betting-closed` (lib/stream/lifecycle.ts) for the subscription's games.
 * - `: heartbeat` comment every `config.edge.sseHeartbeatMs` (15 s, seed "Limits").
 * - Unsent bytes past `config.edge.sseMaxBufferBytes` close the stream (subscriber.ts).
 * - Credential (docs/contract.md "Authentication" 4): `X-API-Key` (or `Authorization: Bearer`), else the
 *   `api_key` or `token` query parameter (EventSource cannot set headers); checked by access.ts
 *   before the stream opens (401/403/429 as JSON, Retry-After on 429). Origin: the header, else the
 *   Referer's origin (a same-origin EventSource sends no Origin). Required only when
 *   AUTH_REQUIRE_SSE is on; a stream whose key is revoked or deleted is ended.
 */
import { once } from 'node:events';
import { createEventBuffer, Session } from 'better-sse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { credentialFromHeaders } from '../../../../lib/auth/credentials.ts';
import { HTTP_ERROR, requestOrigin } from '../../../../lib/stream/access.ts';
import { closeSpread } from '../../../../lib/stream/drain.ts';
import type { FanOutHub, Selection } from '../../../../lib/stream/hub.ts';
import { parseStreamOptions, refusedPositionText } from '../../../../lib/stream/options.ts';
import type { Position } from '../../../../lib/stream/position.ts';
import {
  awaitNamedRounds as awaitRounds,
  CATCH_UP_WAIT_MS,
  judgePosition,
  type ResumeDecision,
} from '../../../../lib/stream/resume.ts';
import {
  parseGameSelection,
  parseTypeSelection,
  type SelectionResult,
  selectionLabel,
} from '../../../../lib/stream/selection.ts';
import { startSubscription } from '../../../../lib/stream/subscriber.ts';
import type { EdgeContext, Transport } from '../transport.ts';
import { SseSink, sanitizer } from './subscriber.ts';

/** How long a resume whose id names rounds this edge has not published yet waits for them, ms. */
export const RESUME_CATCH_UP_MS = CATCH_UP_WAIT_MS;
/** Reconnection delay suggested to EventSource clients, ms. */
const RETRY_MS = 2_000;
const CORS = { 'Access-Control-Allow-Origin': '*' } as const;

/**
 * A Last-Event-ID worth resuming from, or why not (SSE's view of lib/stream/resume.ts: every
 * objection means "ignore it and start live"); `unseen` when the only objection is rounds the hub
 * has not published yet (worth waiting for: awaitNamedRounds).
 */
export function resumePosition(
  hub: FanOutHub,
  selection: Selection,
  raw: string | undefined,
  now: number,
): { position?: Position; ignored?: string; unseen?: true } {
  const d = judgePosition(hub, selection, raw, now);
  if (d.kind === 'fresh') return {};
  if (d.kind === 'refused') return { ignored: `malformed (${d.reason})` };
  if (d.kind === 'live') return d.unseen ? { ignored: d.reason, unseen: true } : { ignored: d.reason };
  return { position: d.position };
}

/** Waits until the hub has published every round the id `raw` names (lib/stream/resume.ts). */
export const awaitNamedRounds = awaitRounds;

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

/** Every value of query parameter `name`. */
function queryAll(req: FastifyRequest, name: string): string[] {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}

/** The SSE transport (routes on the edge's HTTP server). */
export function createSseTransport(): Transport {
  const open = new Set<SseSink>();
  let heartbeat: NodeJS.Timeout | undefined;
  let accepting = false;
  return {
    name: 'sse',
    async start(ctx: EdgeContext) {
      const { config, metrics, core } = ctx;
      const log = ctx.logger.child({ component: 'edge-sse' });
      const gauge = metrics.subscribers.labels('sse');
      const delivered = metrics.deliveryCount('sse');
      const slow = metrics.slowCloses.labels('sse');
      accepting = true;
      const shuttingDown = (reply: FastifyReply) =>
        reply.code(503).headers(CORS).send({ error: 'Shutting down', success: false });

      const stream = async (req: FastifyRequest, reply: FastifyReply, parsed: SelectionResult) => {
        if (!parsed.ok)
          return reply.code(parsed.status).headers(CORS).send({ error: parsed.error, success: false });
        const opted = parseStreamOptions((name) => queryAll(req, name));
        if (!opted.ok) return reply.code(400).headers(CORS).send({ error: opted.error, success: false });
        const opts = opted.options;
        if (!accepting) return shuttingDown(reply);
        const selection = parsed.selection;
        const label = selectionLabel(selection);
        const origin = requestOrigin(req.headers);
        const verdict = await ctx.access.check(
          'sse',
          { credential: sseCredentialOf(req), origin, selection, client: req.ip },
          Date.now(),
        );
        if (!verdict.ok) {
          log.info({ selection: label, reason: verdict.reason }, 'SSE refused');
          if (verdict.retryAfterS !== undefined) reply.header('Retry-After', String(verdict.retryAfterS));
          return reply
            .code(verdict.status)
            .headers(CORS)
            .send({ error: HTTP_ERROR[verdict.status], success: false, reason: verdict.reason });
        }
        // A Last-Event-ID (EventSource's own reconnect) wins over the URL's `since`, which it outdates.
        const lastId = lastEventIdOf(req);
        let decision: ResumeDecision;
        if (lastId !== undefined && lastId !== '') {
          decision = await core.decide(selection, lastId);
          if (decision.kind === 'refused')
            decision = { kind: 'live', reason: `malformed (${decision.reason})`, raw: lastId };
        } else {
          decision = await core.decide(selection, opts.since);
          if (decision.kind === 'refused') {
            core.report('sse', decision);
            return reply
              .code(400)
              .headers(CORS)
              .send({ error: refusedPositionText(decision.reason), success: false });
          }
        }
        // The checks above may have waited; a drain that began meanwhile must not miss this stream.
        if (!accepting) return shuttingDown(reply);
        if (decision.kind === 'live')
          log.info({ selection: label, reason: decision.reason }, 'position ignored; starting live');
        reply.hijack();
        const session = new Session(req.raw, reply.raw, {
          headers: { 'Cache-Control': 'no-cache', ...CORS },
          keepAlive: null,
          retry: RETRY_MS,
          trustClientEventId: false,
          sanitizer,
          serializer: String,
        });
        const sink = new SseSink(session, reply.raw, {
          limitBytes: config.edge.sseMaxBufferBytes,
          announceRecovery: opts.envelope,
          onDelivered: () => delivered.add(),
          onSlow: (buffered) => {
            slow.inc();
            log.warn({ selection: label, buffered }, 'slow consumer closed');
          },
          onFailed: (err) =>
            log.error({ selection: label, err: err.message }, 'resume read failed; stream ended'),
        });
        const untrack = ctx.access.track(verdict.principal, () => sink.end(), 'sse');
        open.add(sink);
        gauge.inc();
        let close = () => {};
        session.once('disconnected', () => {
          sink.disconnected();
          close();
          untrack();
          if (open.delete(sink)) gauge.dec();
        });
        await once(session, 'connected');
        const { sub, started } = startSubscription(core, selection, sink, decision, {
          latest: 'newest',
          lifecycle: opts.lifecycle,
        });
        close = () => sub.close();
        if (sink.gone()) sub.close();
        const outcome = await started;
        core.report('sse', decision, outcome);
        if (decision.kind === 'resume') {
          const failed = outcome.result?.outcome === 'failed';
          metrics.sseResumes.inc({ source: failed ? 'failed' : (outcome.source ?? 'failed') });
        }
      };
      // Not in the seed: every game on one stream (one connection for a page showing them all).
      ctx.http.get('/sse/all', (req, reply) => stream(req, reply, { ok: true, selection: { kind: 'all' } }));
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
    },
  };
}
