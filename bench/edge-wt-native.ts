/**
 * WebTransport subscribers of the edge benchmarks held by native clients:
 * `processes` Deno processes running bench/edge-wt-load.ts (Deno's own WebTransport client), with
 * the sessions split evenly between them, driven over their stdin/stdout. A drop-in for the
 * Chromium clients of bench/edge-wt.ts, without a browser's cost per session.
 *
 * Loss: a datagram is never re-sent, so what a session misses is gone. Where it went missing is
 * read from three places: the edge's own counters (`edge_wt_datagrams_dropped_total`), the kernel's
 * drops on the edge's and the clients' UDP sockets (`udpDrops`: a full receive buffer) and the
 * sessions that ended or came up short (`tally`); `probeWindow` reads them all over a window.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DENO_BIN, ROOT } from '../tests/support/processes.ts';
import type { OpenReply, StatsReply } from './edge-clients.ts';
import { type ClientGroup, mergeOpen, mergeStats } from './edge-pool.ts';
import type { WtLoadRequest, WtStatsWire } from './edge-wt-load.ts';

/**
 * `deno` arguments of a load client process: QUIC is unstable API; the network only to 127.0.0.1
 * (load tests target nothing else); no file, environment or system access.
 */
export const WT_LOAD_ARGS: readonly string[] = [
  'run',
  '--unstable-net',
  '--allow-net=127.0.0.1',
  'bench/edge-wt-load.ts',
];

export interface NativeWtOptions {
  /** The edge's QUIC (UDP) port and its HTTP port (for `/cert-hash`). */
  readonly quicPort: number;
  readonly httpPort: number;
  /** Client processes; sessions are split evenly between them. */
  readonly processes: number;
  /** Path and query of every session (default `/wt?game=crash`); a `token=` goes here. */
  readonly path?: string;
  /** Handshakes in flight per process (default 32). */
  readonly concurrency?: number;
  /** Handshake deadline per session, ms (default 20,000). */
  readonly timeoutMs?: number;
}

/** How the sessions fared since the last reset. */
export interface SessionTally {
  readonly open: number;
  /** Sessions ended by the edge or the network (not by the client). */
  readonly ended: number;
  /** Of those, how many ended with each close code and reason (or error). */
  readonly endedBy: Record<string, number>;
  /** Most rounds any session received. */
  readonly best: number;
  /** Sessions that received fewer than `best`. */
  readonly short: number;
  /** Datagrams those sessions missed (each one's shortfall against `best`). */
  readonly missed: number;
}

/** Native client sessions, plus how they fared. */
export interface NativeWtGroup extends ClientGroup {
  tally(): Promise<SessionTally>;
}

interface LoadProcess {
  readonly child: ChildProcess;
  call<T>(req: WtLoadRequest): Promise<T>;
}

function spawnLoad(): LoadProcess {
  const child = spawn(DENO_BIN, [...WT_LOAD_ARGS], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    const m = JSON.parse(line) as { id: number; reply?: unknown; error?: string };
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(new Error(m.error));
    else w?.resolve(m.reply);
  });
  let exited: Error | undefined;
  child.on('exit', (code, signal) => {
    exited = new Error(`WebTransport load client exited (${code ?? signal})`);
    for (const w of waiting.values()) w.reject(exited);
    waiting.clear();
  });
  return {
    child,
    call: <T>(req: WtLoadRequest) =>
      new Promise<T>((resolve, reject) => {
        if (exited) return reject(exited);
        const id = nextId++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.stdin?.write(`${JSON.stringify({ id, req })}\n`);
      }),
  };
}

const floats = (b64: string) => {
  const bytes = Buffer.from(b64, 'base64');
  return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};

/** Sessions held by `o.processes` Deno processes; the certificate hash comes from the edge's `/cert-hash`. */
export async function nativeClients(o: NativeWtOptions): Promise<NativeWtGroup> {
  const cert = (await (await fetch(`http://127.0.0.1:${o.httpPort}/cert-hash`)).json()) as { hash: string };
  const url = `https://127.0.0.1:${o.quicPort}${o.path ?? '/wt?game=crash'}`;
  const procs = Array.from({ length: o.processes }, spawnLoad);
  const all = <T>(req: WtLoadRequest) => Promise.all(procs.map((p) => p.call<T>(req)));
  const wireStats = () => all<WtStatsWire>({ op: 'stats' });
  return {
    pids: procs.map((p) => p.child.pid as number),
    async open(count) {
      const replies = await Promise.all(
        procs.map((p, k) =>
          p.call<OpenReply>({
            op: 'open',
            url,
            certHash: cert.hash,
            count: Math.floor(count / procs.length) + (k < count % procs.length ? 1 : 0),
            concurrency: o.concurrency ?? 32,
            timeoutMs: o.timeoutMs ?? 20_000,
          }),
        ),
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
      const parts: StatsReply[] = (await wireStats()).map((w) => ({
        count: w.count,
        latencies: floats(w.latencies),
        timestamps: floats(w.timestamps),
        first: w.first,
        last: w.last,
      }));
      return mergeStats(parts);
    },
    async tally() {
      const parts = await wireStats();
      const received = new Map<number, number>();
      for (const p of parts)
        for (const [got, n] of Object.entries(p.received))
          received.set(Number(got), (received.get(Number(got)) ?? 0) + n);
      const endedBy: Record<string, number> = {};
      for (const p of parts)
        for (const [why, n] of Object.entries(p.ended)) endedBy[why] = (endedBy[why] ?? 0) + n;
      const best = Math.max(0, ...received.keys());
      let short = 0;
      let missed = 0;
      for (const [got, n] of received)
        if (got < best) {
          short += n;
          missed += (best - got) * n;
        }
      return {
        open: parts.reduce((s, p) => s + p.open, 0),
        ended: Object.values(endedBy).reduce((s, n) => s + n, 0),
        endedBy,
        best,
        short,
        missed,
      };
    },
    async close() {
      await all({ op: 'close' }).catch(() => {});
      for (const p of procs) p.child.stdin?.end();
      // Each exits when its stdin ends; one that does not within 10 s is killed.
      await Promise.all(
        procs.map((p) => {
          if (p.child.exitCode !== null || p.child.signalCode !== null) return undefined;
          const kill = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
          return new Promise((r) => p.child.once('exit', r)).finally(() => clearTimeout(kill));
        }),
      );
    },
  };
}

/**
 * Datagrams the kernel dropped so far because a UDP socket of one of `pids` had a full receive
 * buffer (the `drops` column of /proc/net/udp and udp6, summed over the sockets those processes
 * hold): on the edge's one socket these are the clients' ACKs and keep-alives, on a client's the
 * rounds themselves. Sockets closed meanwhile no longer count.
 */
export function udpDrops(pids: readonly number[]): number {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // ended
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1] as string);
      } catch {
        // closed meanwhile
      }
    }
  }
  let drops = 0;
  for (const table of ['/proc/net/udp', '/proc/net/udp6'])
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 13 && inodes.has(f[9] as string)) drops += Number(f[12]);
    }
  return drops;
}

/** Whether `g` is held by native clients (it can tell how its sessions fared). */
export function isNativeWt(g: ClientGroup): g is NativeWtGroup {
  return typeof (g as Partial<NativeWtGroup>).tally === 'function';
}

/** The edge as the loss probe reads it: its process and its /metrics. */
export interface ProbedEdge {
  readonly pid: number;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/**
 * Seconds the main thread of `pid` has waited on a run queue for a CPU so far (/proc/<pid>/schedstat,
 * second field): time it was ready to run while others' work held the cores. NaN once it ended.
 */
export function runQueueWaitS(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return Number.NaN;
  }
}

/**
 * Takes readings now; `done()` reads them again and says, for the window in between, how many
 * datagrams the sessions missed and where they can have gone (refused by the edge's QUIC
 * connection, `send_failed`; too large; dropped by the kernel on a full socket: on the edge's one
 * socket these are the clients' ACKs and keep-alives, on the clients' sockets the rounds), how
 * many sessions have ended so far and why, and how long the main threads of the edge and of the
 * clients (their JavaScript and QUIC work) waited for a CPU: the share of the window that the
 * machine, not the code, cost them.
 */
export async function probeWindow(
  group: NativeWtGroup,
  edge: ProbedEdge,
): Promise<{ done(): Promise<string> }> {
  const read = async () => ({
    sendFailed: await edge.metric('edge_wt_datagrams_dropped_total', { reason: 'send_failed' }),
    tooLarge: await edge.metric('edge_wt_datagrams_dropped_total', { reason: 'too_large' }),
    edgeSocket: udpDrops([edge.pid]),
    clientSockets: udpDrops(group.pids),
    edgeWait: runQueueWaitS(edge.pid),
    clientWait: group.pids.reduce((s, p) => s + runQueueWaitS(p), 0) / group.pids.length,
    at: performance.now(),
  });
  const before = await read();
  return {
    async done() {
      const after = await read();
      const t = await group.tally();
      const d = (k: keyof typeof before) => after[k] - before[k];
      const pct = (k: 'edgeWait' | 'clientWait') => ((100 * d(k)) / (d('at') / 1000)).toFixed(0);
      const why = Object.entries(t.endedBy)
        .map(([reason, n]) => `${n} ${reason}`)
        .join(', ');
      return (
        `missed ${t.missed} datagrams in ${t.short} of ${t.open + t.ended} sessions (best ${t.best}); ` +
        `edge send failed ${d('sendFailed')}, too large ${d('tooLarge')}; kernel drops (full receive ` +
        `buffer): edge socket ${d('edgeSocket')}, client sockets ${d('clientSockets')}; ` +
        `${t.ended} sessions ended so far${why ? ` (${why})` : ''}; waiting for a CPU: edge ${pct('edgeWait')}% ` +
        `of the window, clients ${pct('clientWait')}% (main threads)`
      );
    },
  };
}
