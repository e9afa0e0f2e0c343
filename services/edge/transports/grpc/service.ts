/**
 * The handlers of datastream.DataStream (proto/datastream.proto). Unary reads come from the
 * read-model database (ListGames, GetHistory) or the hub (GetLatest; ListGames without a
 * database); streams subscribe to the hub. Every error becomes a status in errors.ts; bad input
 * is refused before a stream starts, and a stream announces its start by sending its response
 * headers at once, so a client (and the browser proxy) can tell "refused" from "open".
 *
 * Credentials (seed 000 "Authentication" 5): metadata `x-api-key`, or `authorization: Bearer <key>`;
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
import type { Scope } from '../../../../lib/auth/scopes.ts';
import type { Principal } from '../../../../lib/auth/verifier.ts';
import type { Sql } from '../../../../lib/db/pool.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { bearer, HTTP_ERROR, type StreamAccess } from '../../../../lib/stream/access.ts';
import type { FanOutHub, Selection } from '../../../../lib/stream/hub.ts';
import type { EdgeMetrics } from '../../../../lib/stream/metrics.ts';
import { selectionLabel } from '../../../../lib/stream/selection.ts';
import { notFound, RpcError, toStatus } from './errors.ts';
import { parseFilter, type RoundFilter } from './filter.ts';
import { gameSelection, historyTarget, parseLimit, typeSelection } from './input.ts';
import type {
  FilterMsg,
  GetHistoryRequest,
  GetLatestRequest,
  StreamAllRequest,
  StreamByGameRequest,
  StreamByTypeRequest,
} from './proto.ts';
import { historyFromDb, listGamesFromDb, listGamesFromHub } from './queries.ts';
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
  /** Credential checks (GRPC switch: AUTH_REQUIRE_GRPC). */
  readonly access: StreamAccess;
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
 * Checks the call's credential.
 * @returns the principal (undefined for an anonymous call allowed by AUTH_REQUIRE_GRPC=false).
 * @throws RpcError UNAUTHENTICATED, PERMISSION_DENIED or RESOURCE_EXHAUSTED; details end in `(<reason>)`.
 */
export async function admit(
  access: StreamAccess,
  metadata: Metadata,
  need: { selection: Selection } | { scope: Scope },
): Promise<Principal | undefined> {
  const credential = metadataValue(metadata, 'x-api-key') ?? bearer(metadataValue(metadata, 'authorization'));
  const origin = metadataValue(metadata, 'origin');
  const v = await access.check('grpc', { credential, origin, ...need }, Date.now());
  if (v.ok) return v.principal;
  const wait = v.retryAfterS === undefined ? '' : `, retry after ${v.retryAfterS} s`;
  throw new RpcError(CODE_OF[v.status], `${HTTP_ERROR[v.status]}: ${v.message}${wait} (${v.reason})`);
}

/** The implementation object for `server.addService(dataStreamService(), …)`. */
export function createHandlers(deps: HandlerDeps): UntypedServiceImplementation {
  const { hub, sql, logger } = deps;
  const subscribers = deps.metrics.subscribers.labels(PROTOCOL);
  const delivered = deps.metrics.deliveries.labels(PROTOCOL);
  const slowCloses = deps.metrics.slowCloses.labels(PROTOCOL);

  const fail = (err: unknown) => {
    const s = toStatus(err);
    if (!(err instanceof RpcError)) logger.error({ err }, 'gRPC call failed');
    return s;
  };

  function unary<Req, Res>(scope: Scope, fn: (req: Req) => Promise<Res> | Res) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => admit(deps.access, call.metadata, { scope }))
        .then(() => fn(call.request))
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(fail(err)),
        );
    };
  }

  function stream<Req>(parse: (req: Req) => { selection: Selection; filter: RoundFilter }) {
    return async (call: ServerWritableStream<Req, unknown>) => {
      let parsed: { selection: Selection; filter: RoundFilter };
      let principal: Principal | undefined;
      try {
        if (!deps.accepting()) throw new RpcError(status.UNAVAILABLE, 'server shutting down');
        parsed = parse(call.request);
        principal = await admit(deps.access, call.metadata, { selection: parsed.selection });
      } catch (err) {
        call.emit('error', fail(err));
        return;
      }
      if (call.cancelled) return;
      const { selection, filter } = parsed;
      const log = logger.child({ selection: selectionLabel(selection), peer: call.getPeer() });
      let done = false;
      const cleanup = () => {
        if (done) return;
        done = true;
        unsubscribe();
        untrack();
        deps.streams.delete(sub);
        subscribers.dec();
        log.debug('gRPC stream closed');
      };
      const sub = new GrpcStreamSubscription(call as unknown as StreamCall, {
        selection,
        filter,
        maxBufferBytes: deps.maxBufferBytes,
        onDelivered: () => delivered.inc(),
        onOverflow: (pendingBytes) => {
          slowCloses.inc();
          log.warn({ pendingBytes, limit: deps.maxBufferBytes }, 'slow gRPC subscriber ended');
          cleanup();
        },
      });
      const unsubscribe = hub.subscribe(sub);
      const untrack = deps.access.track(
        principal,
        () =>
          sub.end({
            code: status.UNAUTHENTICATED,
            details: 'Unauthorized: the key has been revoked (revoked)',
          }),
        PROTOCOL,
      );
      deps.streams.add(sub);
      subscribers.inc();
      for (const ev of ['cancelled', 'close', 'finish', 'error']) call.on(ev, cleanup);
      call.sendMetadata(new Metadata());
      log.debug('gRPC stream opened');
    };
  }

  const withFilter = (selection: Selection, f: FilterMsg | null | undefined) => ({
    selection,
    filter: parseFilter(f, selection),
  });

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
    StreamByGame: stream((req: StreamByGameRequest) => withFilter(gameSelection(req.game_slug), req.filter)),
    StreamByType: stream((req: StreamByTypeRequest) => withFilter(typeSelection(req.game_type), req.filter)),
    StreamAll: stream((req: StreamAllRequest) => withFilter({ kind: 'all' }, req.filter)),
  };
}
