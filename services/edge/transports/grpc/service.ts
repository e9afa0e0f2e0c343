/**
 * The handlers of datastream.DataStream (proto/datastream.proto). Unary reads come from the
 * read-model database (ListGames, GetHistory) or the hub (GetLatest; ListGames without a
 * database); streams subscribe to the hub. Every error becomes a status in errors.ts; bad input
 * is refused before a stream starts, and a stream announces its start by sending its response
 * headers at once, so a client (and the browser proxy) can tell "refused" from "open".
 *
 * Credentials (docs/contract.md "Authentication" 5): metadata `x-api-key`, or `authorization: Bearer <key>`;
 * `origin` metadata (the browser proxy forwards the page's Origin) for public keys. Checked by
 * access.ts on every call after the input: UNAUTHENTICATED (401), PERMISSION_DENIED (403: streams
 * need `stream:game`/`stream:*`, ListGames `read:games`, GetLatest/GetHistory `read:rounds`),
 * RESOURCE_EXHAUSTED (429). A stream whose key is revoked or deleted ends with UNAUTHENTICATED.
 */
import {
  Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { GuardedStreamAccess } from '../../../../lib/auth/failure-budget.ts';
import type { Scope } from '../../../../lib/auth/scopes.ts';
import type { Principal } from '../../../../lib/auth/verifier.ts';
import type { Sql } from '../../../../lib/db/pool.ts';
import { clientAddress, type TrustFn } from '../../../../lib/http/trust.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { bearer, HTTP_ERROR } from '../../../../lib/stream/access.ts';
import type { StreamCore } from '../../../../lib/stream/core.ts';
import type { FanOutHub, Selection } from '../../../../lib/stream/hub.ts';
import type { EdgeMetrics } from '../../../../lib/stream/metrics.ts';
import { refusedPositionText } from '../../../../lib/stream/options.ts';
import type { ResumeDecision } from '../../../../lib/stream/resume.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import { startSubscription } from '../../../../lib/stream/subscriber.ts';
import { invalidArgument, notFound, RpcError, toStatus } from './errors.ts';
import { parseFilter, type RoundFilter } from './filter.ts';
import { gameSelection, historyTarget, parseLimit, typeSelection } from './input.ts';
import type {
  FilterMsg,
  GetHistoryRequest,
  GetLatestRequest,
  StreamAllRequest,
  StreamByGameRequest,
  StreamByTypeRequest,
  StreamOptionsMsg,
  StreamRoundEventsRequest,
} from './proto.ts';
import { historyFromDb, listGamesFromDb, listGamesFromHub } from './queries.ts';
import { GrpcSink, type GrpcWireForm } from './sink.ts';
import { GrpcStreamSubscription, type StreamCall } from './stream.ts';

export const PROTOCOL = 'grpc';

export interface HandlerDeps {
  readonly hub: FanOutHub;
  /** Read-model database; without it ListGames falls back to the hub and GetHistory is UNAVAILABLE. */
  readonly sql?: Sql;
  readonly metrics: EdgeMetrics;
  /** Per-stream limit of unflushed bytes (config GRPC_MAX_BUFFER_BYTES). */
  readonly maxBufferBytes: number;
  readonly logger: Logger;
  /** Open streams; the transport ends them when it drains. */
  readonly streams: Set<GrpcStreamSubscription>;
  /** False once the transport is stopping: new streams are refused with UNAVAILABLE. */
  readonly accepting: () => boolean;
  /** Credential checks (GRPC switch: AUTH_REQUIRE_GRPC) behind the failed-credential budget. */
  readonly access: GuardedStreamAccess;
  /** Whose `x-forwarded-for` metadata names the client (EDGE_TRUST_PROXY; the gRPC proxy's loopback dial). */
  readonly trust: TrustFn;
  /** Resumes and subscriptions (lib/stream/core.ts). */
  readonly core: StreamCore;
  /** Period of StreamRoundEvents heartbeats, ms (EDGE_SSE_HEARTBEAT_MS). */
  readonly heartbeatMs: number;
}

const CODE_OF = {
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  429: status.RESOURCE_EXHAUSTED,
} as const;

function metadataValue(md: Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The address of a call's peer as `getPeer()` gives it (`1.2.3.4:5`, `[::1]:5`, or with an
 * `ipv4:`/`ipv6:` scheme as older grpc-js wrote it), without port; '' for a Unix socket; the whole
 * text when it has another form.
 */
export function peerAddress(peer: string): string {
  if (peer.startsWith('unix:')) return '';
  const bare = peer.replace(/^ipv[46]:/, '');
  const m = /^\[([^\]]+)\]:\d+$/.exec(bare) ?? /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(bare);
  return m ? (m[1] as string) : bare;
}

/**
 * Checks the call's credential; `peer` is `call.getPeer()`, whose `x-forwarded-for` metadata is
 * believed when `trust` says so (the edge's gRPC proxy dials on loopback and names the browser).
 * @returns the principal (undefined for an anonymous call allowed by AUTH_REQUIRE_GRPC=false).
 * @throws RpcError UNAUTHENTICATED, PERMISSION_DENIED or RESOURCE_EXHAUSTED (also past the
 *   failed-credential budget of the client's IP); details end in `(<reason>)`.
 */
export async function admit(
  access: GuardedStreamAccess,
  call: { readonly metadata: Metadata; getPeer(): string },
  need: { selection: Selection } | { scope: Scope },
  trust: TrustFn,
): Promise<Principal | undefined> {
  const { metadata } = call;
  const credential = metadataValue(metadata, 'x-api-key') ?? bearer(metadataValue(metadata, 'authorization'));
  const origin = metadataValue(metadata, 'origin');
  const client = clientAddress(
    peerAddress(call.getPeer()),
    metadataValue(metadata, 'x-forwarded-for'),
    trust,
  );
  const v = await access.check('grpc', { credential, origin, ...need, client }, Date.now());
  if (v.ok) return v.principal;
  const wait = v.retryAfterS === undefined ? '' : `, retry after ${v.retryAfterS} s`;
  throw new RpcError(CODE_OF[v.status], `${HTTP_ERROR[v.status]}: ${v.message}${wait} (${v.reason})`);
}

/** The implementation object for `server.addService(dataStreamService(), …)`. */
export function createHandlers(deps: HandlerDeps): UntypedServiceImplementation {
  const { hub, sql, logger } = deps;
  const subscribers = deps.metrics.subscribers.labels(PROTOCOL);
  const delivered = deps.metrics.deliveryCount(PROTOCOL);
  const slowCloses = deps.metrics.slowCloses.labels(PROTOCOL);

  const fail = (err: unknown) => {
    const s = toStatus(err);
    if (!(err instanceof RpcError)) logger.error({ err }, 'gRPC call failed');
    return s;
  };

  function unary<Req, Res>(scope: Scope, fn: (req: Req) => Promise<Res> | Res) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => admit(deps.access, call, { scope }, deps.trust))
        .then(() => fn(call.request))
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(fail(err)),
        );
    };
  }

  /** What a stream call asks for, parsed from its request. */
  interface StreamPlan {
    readonly selection: Selection;
    readonly filter: RoundFilter;
    readonly since: string | undefined;
    readonly latest: boolean;
    readonly lifecycle: boolean;
    readonly form: GrpcWireForm;
  }

  function stream<Req>(parse: (req: Req) => StreamPlan) {
    return async (call: ServerWritableStream<Req, unknown>) => {
      let plan: StreamPlan;
      let principal: Principal | undefined;
      let decision: ResumeDecision;
      try {
        if (!deps.accepting()) throw new RpcError(status.UNAVAILABLE, 'server shutting down');
        plan = parse(call.request);
        principal = await admit(deps.access, call, { selection: plan.selection }, deps.trust);
        decision = await deps.core.decide(plan.selection, plan.since);
        if (decision.kind === 'refused') {
          deps.core.report(PROTOCOL, decision);
          throw invalidArgument(refusedPositionText(decision.reason));
        }
        if (!deps.accepting()) throw new RpcError(status.UNAVAILABLE, 'server shutting down');
      } catch (err) {
        call.emit('error', fail(err));
        return;
      }
      if (call.cancelled) return;
      const { selection, filter } = plan;
      const log = logger.child({ selection: selectionLabel(selection), peer: call.getPeer() });
      let done = false;
      const cleanup = () => {
        if (done) return;
        done = true;
        sub.close();
        clearInterval(beat);
        untrack();
        deps.streams.delete(guard);
        subscribers.dec();
        log.debug('gRPC stream closed');
      };
      const guard = new GrpcStreamSubscription(call as unknown as StreamCall, {
        selection,
        filter,
        maxBufferBytes: deps.maxBufferBytes,
        onDelivered: () => delivered.add(),
        onOverflow: (pendingBytes) => {
          slowCloses.inc();
          log.warn({ pendingBytes, limit: deps.maxBufferBytes }, 'slow gRPC subscriber ended');
          cleanup();
        },
      });
      const sink = new GrpcSink(guard, plan.form, filter, deps.maxBufferBytes);
      const md = new Metadata();
      if (plan.since !== undefined) {
        md.set('x-stream-recovered', decision.kind === 'resume' ? 'true' : 'false');
        if (decision.kind === 'live') md.set('x-stream-recovered-reason', decision.reason);
      }
      // Headers first: they tell the client (and the browser proxy) the stream is open.
      call.sendMetadata(md);
      const { sub, started } = startSubscription(deps.core, selection, sink, decision, {
        latest: plan.latest ? 'each' : 'none',
        lifecycle: plan.lifecycle,
      });
      const beat = setInterval(() => sink.heartbeat(sub), deps.heartbeatMs);
      beat.unref();
      const untrack = deps.access.track(
        principal,
        () =>
          guard.end({
            code: status.UNAUTHENTICATED,
            details: 'Unauthorized: the key has been revoked (revoked)',
          }),
        PROTOCOL,
      );
      deps.streams.add(guard);
      subscribers.inc();
      for (const ev of ['cancelled', 'close', 'finish', 'error']) call.on(ev, cleanup);
      log.debug('gRPC stream opened');
      void started.then((o) => deps.core.report(PROTOCOL, decision, o));
    };
  }

  /** The options every Stream* request shares. */
  const rounds = (
    selection: Selection,
    req: StreamOptionsMsg & { filter?: FilterMsg | null },
  ): StreamPlan => {
    const since = req.since ? req.since : undefined;
    return {
      selection,
      filter: parseFilter(req.filter, selection),
      since,
      latest: req.latest === true,
      lifecycle: false,
      form: req.positions || since !== undefined ? 'positioned-rounds' : 'rounds',
    };
  };

  /** StreamRoundEvents: exactly one of game_slug, game_type, all. */
  const events = (req: StreamRoundEventsRequest): StreamPlan => {
    const selection: Selection =
      req.game_slug !== undefined
        ? gameSelection(req.game_slug)
        : req.game_type !== undefined
          ? typeSelection(req.game_type)
          : req.all
            ? { kind: 'all' }
            : (() => {
                throw invalidArgument('game_slug, game_type or all is required');
              })();
    return {
      selection,
      filter: parseFilter(req.filter, selection),
      since: req.since ? req.since : undefined,
      latest: req.latest === true,
      lifecycle: req.lifecycle === true,
      form: 'events',
    };
  };

  return {
    ListGames: unary('read:games', async () => ({
      games: sql ? await listGamesFromDb(sql) : listGamesFromHub(hub),
    })),
    GetLatest: unary('read:rounds', (req: GetLatestRequest) => {
      const selection = gameSelection(req.game_slug);
      const d = hub.latest(selection)[0];
      if (!d) throw notFound('No rounds yet');
      return d.streamForm(selection);
    }),
    GetHistory: unary('read:rounds', async (req: GetHistoryRequest) => {
      const target = historyTarget(req);
      const limit = parseLimit(req.limit);
      if (!sql) throw new RpcError(status.UNAVAILABLE, 'history needs the read-model database');
      return { rounds: await historyFromDb(sql, target, limit) };
    }),
    StreamByGame: stream((req: StreamByGameRequest) => rounds(gameSelection(req.game_slug), req)),
    StreamByType: stream((req: StreamByTypeRequest) => rounds(typeSelection(req.game_type), req)),
    StreamAll: stream((req: StreamAllRequest) => rounds({ kind: 'all' }, req)),
    StreamRoundEvents: stream(events),
  };
}
