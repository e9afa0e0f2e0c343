/**
 * Helpers of the tests of the stream client (packages/client) and of the resumable streams (not a
 * test file): a recorder of what a subscription gives the application, the transports of an
 * in-process edge for Node, and lifecycle events of a round.
 */
import WebSocket from 'ws';
import { grpcTransport } from '../../packages/client/src/grpc.ts';
import {
  type Connection,
  type ConnectionEvents,
  type LifecycleMessage,
  type RecoveredInfo,
  type RoundMeta,
  type ServerError,
  type StreamRound,
  type SubscribeOptions,
  sseTransport,
  type Transport,
  websocketTransport,
} from '../../packages/client/src/index.ts';
import type { Edge } from '../../services/edge/edge.ts';

export { lifecycleOf } from '../../rules/rounds/samples.ts';

/** What a subscription gave the application, in order. */
export interface Recorder extends SubscribeOptions {
  readonly rounds: StreamRound[];
  readonly metas: RoundMeta[];
  readonly phases: LifecycleMessage[];
  readonly recovered: RecoveredInfo[];
  readonly errors: ServerError[];
  /** Round ids per game, in the order given. */
  ids(game: string): number[];
}

/** A recorder with `opts` (since, latest, lifecycle) for `client.subscribe`. */
export function recorder(opts: Pick<SubscribeOptions, 'since' | 'latest' | 'lifecycle'> = {}): Recorder {
  const r: Recorder = {
    ...opts,
    rounds: [],
    metas: [],
    phases: [],
    recovered: [],
    errors: [],
    ids: (game) => r.rounds.filter((x) => x.game_slug === game).map((x) => x.round_id),
    onRound(round, meta) {
      r.rounds.push(round);
      r.metas.push(meta);
    },
    onLifecycle: (m) => r.phases.push(m),
    onRecovered: (i) => r.recovered.push(i),
    onError: (e) => r.errors.push(e),
  };
  return r;
}

/** The base URL of an in-process edge (its HTTP port: SSE, the gRPC proxy). */
export const baseOf = (edge: Edge): string => `http://127.0.0.1:${edge.httpPort}`;

/**
 * The client's transport `name` for in-process edges, by base URL: the WebSocket and gRPC ports
 * differ from the HTTP one, so each is looked up from the edge whose base URL is in use.
 */
export function transportFor(
  name: 'websocket' | 'sse' | 'grpc' | 'grpc-proxy',
  edges: readonly Edge[],
): Transport {
  const edgeOf = (base: string) => {
    const e = edges.find((x) => baseOf(x) === base);
    if (!e) throw new Error(`no edge at ${base}`);
    return e;
  };
  if (name === 'websocket')
    return websocketTransport({
      url: (base) => `ws://127.0.0.1:${edgeOf(base).portOf('ws')}/ws/`,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    });
  if (name === 'grpc')
    return grpcTransport({ address: (base) => `127.0.0.1:${edgeOf(base).portOf('grpc')}` });
  return sseTransport(name === 'sse' ? {} : { path: '/grpc-proxy/stream' });
}

/** A transport whose current connection a test can drop, as a lost network would. */
export interface DroppableTransport extends Transport {
  /** Ends the current connection: closed under the client, which hears `close` and reconnects. */
  drop(): void;
  /** Connections dropped so far. */
  readonly drops: number;
}

/** `inner`, with {@link DroppableTransport.drop}. */
export function droppable(inner: Transport): DroppableTransport {
  let current: (() => void) | undefined;
  let drops = 0;
  return {
    name: inner.name,
    connect(ctx, events): Connection {
      let over = false;
      const guarded: ConnectionEvents = {
        open: () => {
          if (!over) events.open();
        },
        message: (e) => {
          if (!over) events.message(e);
        },
        close: (info) => {
          if (over) return;
          over = true;
          events.close(info);
        },
      };
      const conn = inner.connect(ctx, guarded);
      current = () => {
        if (over) return;
        over = true;
        drops++;
        conn.close();
        events.close({ reason: 'dropped by the test' });
      };
      return conn;
    },
    drop: () => current?.(),
    get drops() {
      return drops;
    },
  };
}
