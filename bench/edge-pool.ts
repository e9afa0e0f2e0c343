/**
 * Subscribers of the edge benchmarks held by client processes (bench/edge-clients.ts, forked with
 * IPC), and the statistics over what they received: merged latencies, percentiles, and per-round
 * figures (first receiver, fan-out span).
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { OpenReply, Protocol, Request, StatsReply } from './edge-clients.ts';
import { sleep } from './edge-harness.ts';
import type { WsProtocol } from './edge-wire.ts';
import { latencySummary } from './lib.ts';

/** Subscribers of one protocol, however they are held (client processes, a browser). */
export interface ClientGroup {
  open(count: number): Promise<OpenReply>;
  reset(since: number): Promise<void>;
  count(): Promise<number>;
  /** Merged latencies (ms) and the first/last receive wall times (ms). */
  stats(): Promise<StatsReply>;
  close(): Promise<void>;
  /** Process ids of the clients (CPU time readings). */
  readonly pids: number[];
}

/** A forked client process and its request/reply calls over IPC. */
export interface Worker<R = Request> {
  readonly child: ChildProcess;
  call<T>(req: R): Promise<T>;
}

/**
 * Forks `module` (bench/edge-clients.ts by default; any module that answers `{id, req}` messages
 * with `{id, reply}` or `{id, error}`: client-worker.ts `serveParent`) with tsx and advanced
 * serialisation.
 */
export function forkWorker<R = Request>(
  module: URL = new URL('./edge-clients.ts', import.meta.url),
): Worker<R> {
  const child = fork(module, [], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; reply?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(new Error(m.error));
    else w?.resolve(m.reply);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`client process exited (${code})`));
  });
  return {
    child,
    call: <T>(req: R) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, req });
      }),
  };
}

export interface ProcessClientsOptions {
  readonly protocol: Protocol;
  readonly port: number;
  /** `/ws/crash`, `/sse/crash`, or the slug for gRPC. */
  readonly path: string;
  /** Client processes; subscribers are split evenly between them. */
  readonly processes: number;
  /** Handshakes in flight per process. */
  readonly concurrency?: number;
  /** gRPC: HTTP/2 connections per process. */
  readonly grpcChannels?: number;
  /** Source addresses per process (127.A.<process>.1..n; A random per run, so TIME_WAIT never collides). */
  readonly addressesPerProcess?: number;
  /** WebSocket: a server protocol's hello and pings (bench/edge-wire.ts WsProtocol). */
  readonly ws?: WsProtocol;
}

/** Subscribers held by forked client processes. */
export function processClients(o: ProcessClientsOptions): ClientGroup {
  const workers = Array.from({ length: o.processes }, () => forkWorker());
  const a = 2 + Math.floor(Math.random() * 250);
  const all = <T>(req: Request) => Promise.all(workers.map((w) => w.call<T>(req)));
  return {
    pids: workers.map((w) => w.child.pid as number),
    async open(count) {
      const replies = await Promise.all(
        workers.map((w, k) => {
          const n = Math.floor(count / workers.length) + (k < count % workers.length ? 1 : 0);
          const localAddresses = Array.from(
            { length: o.addressesPerProcess ?? 4 },
            (_, j) => `127.${a}.${k}.${j + 1}`,
          );
          return w.call<OpenReply>({
            op: 'open',
            protocol: o.protocol,
            host: '127.0.0.1',
            port: o.port,
            path: o.path,
            count: n,
            localAddresses,
            concurrency: o.concurrency ?? 64,
            grpcChannels: o.grpcChannels ?? 1,
            ...(o.ws ? { ws: o.ws } : {}),
          });
        }),
      );
      return mergeOpen(replies);
    },
    async reset(since) {
      await all({ op: 'reset', since });
    },
    async count() {
      return (await all<{ count: number }>({ op: 'count' })).reduce((s, r) => s + r.count, 0);
    },
    async stats() {
      return mergeStats(await all<StatsReply>({ op: 'stats' }));
    },
    async close() {
      await all({ op: 'close' }).catch(() => {});
      for (const w of workers) w.child.disconnect();
    },
  };
}

/** One OpenReply out of those of several client processes (sums; the slowest one's time). */
export function mergeOpen(replies: readonly OpenReply[]): OpenReply {
  return {
    opened: replies.reduce((s, r) => s + r.opened, 0),
    failed: replies.reduce((s, r) => s + r.failed, 0),
    firstError: replies.find((r) => r.firstError)?.firstError,
    ms: Math.max(...replies.map((r) => r.ms)),
  };
}

/** One StatsReply out of several (first = earliest, last = latest receive). */
export function mergeStats(parts: readonly StatsReply[]): StatsReply {
  const count = parts.reduce((s, p) => s + p.count, 0);
  const latencies = new Float64Array(count);
  const timestamps = new Float64Array(count);
  let at = 0;
  for (const p of parts) {
    latencies.set(p.latencies, at);
    timestamps.set(p.timestamps, at);
    at += p.latencies.length;
  }
  const firsts = parts.filter((p) => p.count > 0).map((p) => p.first);
  return {
    count,
    latencies,
    timestamps,
    first: firsts.length ? Math.min(...firsts) : 0,
    last: Math.max(0, ...parts.map((p) => p.last)),
  };
}

/** Waits until `group` counted `expected` deliveries or `timeoutMs` passed; @returns the count. */
export async function awaitDeliveries(
  group: ClientGroup,
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let n = 0;
  while (Date.now() < deadline) {
    n = await group.count();
    if (n >= expected) return n;
    await sleep(100);
  }
  return n;
}

/**
 * Per round (deliveries grouped by timestamp): the latency of its first receiver, and the span
 * from its first to its last receiver (the fan-out's own cost, edge write loop plus client reads).
 * @returns medians and p99s over the rounds, ms.
 */
export function perRound(s: StatsReply): { firstP50: number; spanP50: number; spanP99: number } {
  const byRound = new Map<number, { min: number; max: number }>();
  for (let i = 0; i < s.count; i++) {
    const ts = s.timestamps[i] as number;
    const l = s.latencies[i] as number;
    const r = byRound.get(ts);
    if (!r) byRound.set(ts, { min: l, max: l });
    else {
      if (l < r.min) r.min = l;
      if (l > r.max) r.max = l;
    }
  }
  const rounds = [...byRound.values()];
  const spans = latencySummary(rounds.map((r) => r.max - r.min));
  return { firstP50: latencySummary(rounds.map((r) => r.min)).p50, spanP50: spans.p50, spanP99: spans.p99 };
}
