/**
 * The handlers of datastream.DataStream (proto/datastream.proto). Unary reads come from the
 * read-model database (ListGames, GetHistory) or the hub (GetLatest; ListGames without a
 * database); streams subscribe to the hub. Every error becomes a status in errors.ts; bad input
 * is refused before a stream starts, and a stream announces its start by sending its response
 * headers at once, so a client (and the browser proxy) can tell "refused" from "open".
 */
import {
  Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Sql } from '../../../../lib/db.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { FanOutHub, Selection } from '../../hub.ts';
import type { EdgeMetrics } from '../../metrics.ts';
import { selectionLabel } from '../../selection.ts';
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

  function unary<Req, Res>(fn: (req: Req) => Promise<Res> | Res) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => fn(call.request))
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(fail(err)),
        );
    };
  }

  function stream<Req>(parse: (req: Req) => { selection: Selection; filter: RoundFilter }) {
    return (call: ServerWritableStream<Req, unknown>) => {
      let parsed: { selection: Selection; filter: RoundFilter };
      try {
        if (!deps.accepting()) throw new RpcError(status.UNAVAILABLE, 'server shutting down');
        parsed = parse(call.request);
      } catch (err) {
        call.emit('error', fail(err));
        return;
      }
      const { selection, filter } = parsed;
      const log = logger.child({ selection: selectionLabel(selection), peer: call.getPeer() });
      let done = false;
      const cleanup = () => {
        if (done) return;
        done = true;
        unsubscribe();
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
    ListGames: unary(async () => ({ games: sql ? await listGamesFromDb(sql) : listGamesFromHub(hub) })),
    GetLatest: unary((req: GetLatestRequest) => {
      const selection = gameSelection(req.game_slug);
      const d = hub.latest(selection)[0];
      if (!d) throw notFound('No rounds yet');
      return d.streamForm(selection);
    }),
    GetHistory: unary(async (req: GetHistoryRequest) => {
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
