/**
 * The gRPC proxy for browsers (docs/contract.md "Static files"), a fastify plugin on the edge's HTTP server. Every route makes a real gRPC call to the
 * DataStream server and relays the answer:
 *
 * - GET /grpc-proxy/stream/:game, /grpc-proxy/stream/type/:type, /grpc-proxy/stream
 *   → StreamByGame / StreamByType / StreamAll as SSE (relay.ts). Query: `min_point`, `max_point`
 *   (numbers), `colors`, `trends` (comma-separated) become the gRPC `Filter`. With `since`, a
 *   Last-Event-ID (or `lastEventId`), `envelope=1`, `latest=1` or `lifecycle=1` the call is
 *   StreamRoundEvents instead and events carry their position as SSE ids (events.ts).
 * - Credential: the page's `X-API-Key` / `Authorization` header, else its `token` or `api_key`
 *   query parameter, goes to the gRPC call as metadata `x-api-key`, and the page's `Origin` (or its
 *   Referer's origin, access.ts `requestOrigin`) as metadata `origin` (public keys); the gRPC server decides (AUTH_REQUIRE_GRPC).
 * - GET /grpc-proxy/games → ListGames, /grpc-proxy/latest/:game → GetLatest,
 *   /grpc-proxy/history/:game and /grpc-proxy/history/type/:type (`limit`) → GetHistory, as JSON.
 *
 * A gRPC status before any data becomes HTTP in services/edge/errors.ts (httpReplyForError, the
 * edge's one HTTP mapping): NOT_FOUND → 404, INVALID_ARGUMENT → 400, UNAUTHENTICATED → 401,
 * PERMISSION_DENIED → 403, RESOURCE_EXHAUSTED → 429, anything else → 502, with the body
 * `{error, success:false}` (plus `reason` for 401/403/429). Every answer carries CORS `*`.
 */
import { type ClientReadableStream, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { credentialFromHeaders } from '../../../../lib/auth/credentials.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { requestOrigin } from '../../../../lib/stream/access.ts';
import { httpReplyForError, httpStatusOf } from '../../errors.ts';
import { LIMIT_RULE } from '../grpc/input.ts';
import {
  createDataStreamClient,
  type DataStreamClient,
  type FilterMsg,
  type RoundMsg,
} from '../grpc/proto.ts';
import { eventFrame } from './events.ts';
import { type Relay, relayToSse, streamFormOf } from './relay.ts';

/** Unary calls give up after this long (ms). */
const UNARY_DEADLINE_MS = 5000;

export interface GrpcProxyOptions {
  /** `host:port` of the DataStream server, or a getter for one known only once it listens. */
  readonly grpcAddress: string | (() => string);
  readonly logger: Logger;
  /** SSE `: heartbeat` period, ms (default 15000, docs/contract.md "Limits"). */
  readonly heartbeatMs?: number;
  /** Open relays are added here and removed when they end, so the owner can end them on shutdown. */
  readonly relays?: Set<Relay>;
  /** Open relays gauge (EdgeMetrics.subscribers labelled `grpc-proxy`). */
  readonly gauge?: { inc(): void; dec(): void };
}

/** Answers a gRPC status that ended a call before any data (services/edge/errors.ts httpReplyForError). */
function sendError(reply: FastifyReply, err: ServiceError): void {
  const r = httpReplyForError(err);
  reply.code(r.status).headers(r.headers).send(r.body);
}

/**
 * The gRPC metadata carrying the page's credential and Origin, and its address as the edge's HTTP
 * server resolved it (`x-forwarded-for`: the gRPC server believes it from this loopback dial, so
 * the failed-credential budget counts the browser, not the proxy).
 */
export function metadataOf(req: FastifyRequest<{ Querystring: Query }>): Metadata {
  const md = new Metadata();
  md.set('x-forwarded-for', req.ip);
  const q = (k: string) => {
    const v = req.query[k];
    return Array.isArray(v) ? v.at(-1) : v;
  };
  const cred = credentialFromHeaders(req.headers) || q('token') || q('api_key');
  if (cred) md.set('x-api-key', cred);
  const origin = requestOrigin(req.headers);
  if (origin) md.set('origin', origin);
  return md;
}

/** The query's filter; a value that is not a number is sent as NaN, which the server refuses. */
export function filterOf(q: Record<string, string | string[] | undefined>): FilterMsg {
  const one = (k: string) => (Array.isArray(q[k]) ? q[k].at(-1) : q[k]);
  const list = (k: string) =>
    one(k)
      ?.split(',')
      .filter((s) => s !== '') ?? [];
  const num = (k: string) =>
    one(k) === undefined ? {} : { [k]: one(k) === '' ? Number.NaN : Number(one(k)) };
  return { ...num('min_point'), ...num('max_point'), colors: list('colors'), trends: list('trends') };
}

type Query = Record<string, string | string[] | undefined>;
type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

/** The selection of a stream route (`:game`, `type/:type`, or none: all). */
function selectionOf(req: Req): { game_slug?: string; game_type?: string; all?: boolean } {
  if (req.params.type !== undefined) return { game_type: req.params.type };
  if (req.params.game !== undefined) return { game_slug: req.params.game };
  return { all: true };
}

/**
 * The stream opt-ins on a proxy stream (`since`, or the page's Last-Event-ID; `envelope`,
 * `latest`, `lifecycle` as on /sse); undefined when none is asked, and the plain relay of
 * StreamBy* is used, exactly as before.
 */
export function resumeOf(
  req: Pick<Req, 'headers' | 'query'>,
): { request: { since?: string; latest: boolean; lifecycle: boolean }; announce: boolean } | undefined {
  const q = (k: string) => {
    const v = req.query[k];
    return Array.isArray(v) ? v.at(-1) : v;
  };
  const header = req.headers['last-event-id'];
  const since =
    (typeof header === 'string' && header !== '' ? header : undefined) ?? (q('lastEventId') || q('since'));
  const flag = (k: string) => q(k) === '1' || q(k) === 'true';
  if (!since && !flag('envelope') && !flag('latest') && !flag('lifecycle')) return undefined;
  return {
    request: { ...(since ? { since } : {}), latest: flag('latest'), lifecycle: flag('lifecycle') },
    announce: flag('envelope'),
  };
}

/** The plugin; register it on the edge's fastify instance. */
export function grpcProxyPlugin(opts: GrpcProxyOptions): FastifyPluginAsync {
  return async (app) => {
    const log = opts.logger.child({ component: 'grpc-proxy' });
    let client: DataStreamClient | undefined;
    const dial = () => {
      client ??= createDataStreamClient(
        typeof opts.grpcAddress === 'function' ? opts.grpcAddress() : opts.grpcAddress,
      );
      return client;
    };
    app.addHook('onClose', async () => client?.close());

    function stream(open: (c: DataStreamClient, req: Req) => ClientReadableStream<RoundMsg>) {
      return async (req: Req, reply: FastifyReply) => {
        const resume = resumeOf(req);
        const call = resume
          ? dial().StreamRoundEvents(
              { ...selectionOf(req), ...resume.request, filter: filterOf(req.query) },
              metadataOf(req),
            )
          : open(dial(), req);
        const relay = relayToSse(call, {
          ...(resume ? { frame: eventFrame(resume.announce) } : {}),
          res: reply.raw,
          heartbeatMs: opts.heartbeatMs ?? 15_000,
          onRefused: (err) => sendError(reply, err),
          onOpen: () => {
            reply.hijack(); // the relay owns the raw response from here on
            opts.gauge?.inc();
          },
          onEnd: (opened) => {
            opts.relays?.delete(relay);
            if (opened) opts.gauge?.dec();
          },
        });
        opts.relays?.add(relay);
        return reply;
      };
    }

    function unary<Res>(
      call: (c: DataStreamClient, req: Req, cb: (e: ServiceError | null, r?: Res) => void) => unknown,
      shape: (r: Res) => unknown,
    ) {
      return async (req: Req, reply: FastifyReply) => {
        try {
          const res = await new Promise<Res>((resolve, reject) =>
            call(dial(), req, (e, r) => (e ? reject(e) : resolve(r as Res))),
          );
          reply.header('Access-Control-Allow-Origin', '*').send(shape(res));
        } catch (err) {
          if (httpStatusOf((err as ServiceError).code) === 502) log.warn({ err }, 'gRPC call failed');
          sendError(reply, err as ServiceError);
        }
        return reply;
      };
    }

    const md = metadataOf;
    const deadline = () => ({ deadline: Date.now() + UNARY_DEADLINE_MS });
    const filter = (req: Req) => filterOf(req.query);

    app.get(
      '/grpc-proxy/stream',
      stream((c, req) => c.StreamAll({ filter: filter(req) }, md(req))),
    );
    app.get(
      '/grpc-proxy/stream/type/:type',
      stream((c, req) => c.StreamByType({ game_type: req.params.type, filter: filter(req) }, md(req))),
    );
    app.get(
      '/grpc-proxy/stream/:game',
      stream((c, req) => c.StreamByGame({ game_slug: req.params.game, filter: filter(req) }, md(req))),
    );
    // Preflight for fetch-based stream clients that send headers (Last-Event-ID, a key), as /sse has.
    app.options('/grpc-proxy/*', async (_req, reply) =>
      reply
        .code(204)
        .headers({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': 'GET, OPTIONS',
          'Access-Control-Allow-Headers': 'Content-Type, Last-Event-ID, X-API-Key, Authorization',
          'Access-Control-Max-Age': '600',
        })
        .send(),
    );
    app.get(
      '/grpc-proxy/games',
      unary(
        (c, req, cb) => c.ListGames({}, md(req), deadline(), cb),
        (r: { games: { last_round?: number; last_update?: string }[] }) =>
          r.games.map((g) => ({
            ...g,
            last_round: g.last_round ?? null,
            last_update: g.last_update ?? null,
          })),
      ),
    );
    app.get(
      '/grpc-proxy/latest/:game',
      unary(
        (c, req, cb) => c.GetLatest({ game_slug: req.params.game }, md(req), deadline(), cb),
        (r: RoundMsg) => streamFormOf(r),
      ),
    );
    const history =
      (sel: (req: Req) => { game_slug?: string; game_type?: string }) =>
      async (req: Req, reply: FastifyReply) => {
        const raw = req.query.limit;
        if (raw !== undefined && (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw))) {
          return reply
            .code(400)
            .header('Access-Control-Allow-Origin', '*')
            .send({ error: LIMIT_RULE, success: false });
        }
        const limit = raw === undefined ? {} : { limit: Number(raw) };
        return unary(
          (c, r, cb) => c.GetHistory({ ...sel(r), ...limit }, md(r), deadline(), cb),
          (res: { rounds: RoundMsg[] }) => res.rounds.map(streamFormOf),
        )(req, reply);
      };
    app.get(
      '/grpc-proxy/history/type/:type',
      history((req) => ({ game_type: req.params.type })),
    );
    app.get(
      '/grpc-proxy/history/:game',
      history((req) => ({ game_slug: req.params.game })),
    );
  };
}
