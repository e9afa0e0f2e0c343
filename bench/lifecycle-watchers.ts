/**
 * Client process of bench/lifecycle.ts (forked by bench/lifecycle-watch.ts through edge-pool.ts
 * `forkWorker`; client-worker.ts): holds WebSocket watchers of one stream path (bench/edge-wire.ts raw clients, so
 * the load generator stays light) and keeps, for every round and lifecycle message they receive, its
 * kind, round, append time, event time and receive time (bench/lifecycle-messages.ts). Requests and
 * replies over IPC (advanced serialisation):
 *
 * - `{ op: 'open', host, port, path, count, localAddresses, concurrency }` → `{ opened, failed, firstError, ms }`
 * - `{ op: 'reset', since }` → `{}`: forget what was received; keep only messages appended at or after `since` (Unix ms).
 * - `{ op: 'stats' }` → `{ deliveries: Deliveries, heartbeats, other, unreadable }`
 * - `{ op: 'close' }` → `{}` once every watcher is closed.
 */
import { type OpenReply, openAll, serveParent } from './client-worker.ts';
import type { OpenRequest } from './edge-clients.ts';
import { type Conn, openWs } from './edge-wire.ts';
import { type Deliveries, KINDS, readFrame } from './lifecycle-messages.ts';

export type WatcherRequest =
  /** `path`: `/ws/crash` or `/ws/crash?envelope=1&lifecycle=1`. */
  | ({ op: 'open' } & Pick<
      OpenRequest,
      'host' | 'port' | 'path' | 'count' | 'localAddresses' | 'concurrency'
    >)
  | { op: 'reset'; since: number }
  | { op: 'stats' }
  | { op: 'close' };

export interface WatcherStats {
  readonly deliveries: Deliveries;
  readonly heartbeats: number;
  readonly other: number;
  /** Frames that were not JSON. */
  readonly unreadable: number;
}

const HANDSHAKE_TIMEOUT_MS = 20_000;
const conns: Conn[] = [];
let since = Number.POSITIVE_INFINITY;
let rows = {
  kind: [] as number[],
  roundId: [] as number[],
  appendedAt: [] as number[],
  eventAt: [] as number[],
};
let receivedAt: number[] = [];
let counts = { heartbeats: 0, other: 0, unreadable: 0 };

function onFrame(payload: Buffer, at: number): void {
  let m: ReturnType<typeof readFrame>;
  try {
    m = readFrame(payload.toString());
  } catch {
    counts.unreadable++;
    return;
  }
  if (m === 'heartbeat') counts.heartbeats++;
  else if (m === 'other') counts.other++;
  else if (m.appendedAt >= since) {
    rows.kind.push(KINDS.indexOf(m.kind));
    rows.roundId.push(m.roundId);
    rows.appendedAt.push(m.appendedAt);
    rows.eventAt.push(m.eventAt);
    receivedAt.push(at);
  }
}

function open(r: Extract<WatcherRequest, { op: 'open' }>): Promise<OpenReply> {
  const target = (i: number) => ({
    host: r.host,
    port: r.port,
    path: r.path,
    localAddress: r.localAddresses[i % r.localAddresses.length],
    timeoutMs: HANDSHAKE_TIMEOUT_MS,
  });
  return openAll(r.count, r.concurrency, (i) => openWs(target(i), onFrame), conns);
}

async function handle(r: WatcherRequest): Promise<unknown> {
  switch (r.op) {
    case 'open':
      return await open(r);
    case 'reset':
      since = r.since;
      rows = { kind: [], roundId: [], appendedAt: [], eventAt: [] };
      receivedAt = [];
      counts = { heartbeats: 0, other: 0, unreadable: 0 };
      return {};
    case 'stats':
      return {
        deliveries: {
          kind: Uint8Array.from(rows.kind),
          roundId: Float64Array.from(rows.roundId),
          appendedAt: Float64Array.from(rows.appendedAt),
          eventAt: Float64Array.from(rows.eventAt),
          receivedAt: Float64Array.from(receivedAt),
        },
        ...counts,
      } satisfies WatcherStats;
    case 'close':
      for (const c of conns.splice(0)) c.close();
      return {};
  }
}

serveParent(handle);
