/**
 * The watchers' measure of bench/lifecycle.ts ("1,000 players watching a
 * crash flight: p99 delay of what they see, and the edge's CPU"). The edge of the stack streams a
 * real engine's crash rounds; first nobody watches (the edge's idle CPU: its log consumer, timers),
 * then `watchers` WebSocket subscribers of `/ws/crash` (plain: only finished rounds, the baseline),
 * then as many of `/ws/crash?envelope=1&lifecycle=1` (round-opened, betting-closed — the flight's
 * start — and the round — its end), each for the same time, then nobody again. The subscribers live in forked client
 * processes (lifecycle-watchers.ts); the edge's CPU-seconds come from /proc/<pid>/stat.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OpenReply } from './client-worker.ts';
import { cpuOf } from './edge-harness.ts';
import { forkWorker, type Worker } from './edge-pool.ts';
import { type Deliveries, type KindFigures, mergeDeliveries, summarize } from './lifecycle-messages.ts';
import type { LifecycleStack } from './lifecycle-stack.ts';
import type { WatcherRequest, WatcherStats } from './lifecycle-watchers.ts';

export interface WatchOptions {
  readonly watchers: number;
  /** Length of each measured window, s. */
  readonly seconds: number;
  /** Length of each window without watchers (one before, one after), s. */
  readonly idleSeconds: number;
  readonly clientProcesses: number;
}

/** One kind of subscription measured over a window. */
export interface WatchVariant {
  readonly label: 'plain' | 'lifecycle';
  readonly path: string;
  readonly opened: number;
  readonly failed: number;
  readonly firstError?: string;
  readonly figures: KindFigures[];
  /** Measured deliveries (rounds and lifecycle messages appended in the window). */
  readonly deliveries: number;
  readonly heartbeats: number;
  readonly other: number;
  readonly unreadable: number;
  readonly wallS: number;
  readonly edgeCpuS: number;
  readonly clientCpuS: number;
}

export interface WatchRun {
  readonly idle: { readonly wallS: number; readonly edgeCpuS: number };
  readonly variants: WatchVariant[];
}

const SETTLE_MS = 2_000;
const GRACE_MS = 1_500;

async function measure(
  stack: LifecycleStack,
  label: WatchVariant['label'],
  path: string,
  o: WatchOptions,
): Promise<WatchVariant> {
  const edge = stack.edge;
  if (!edge) throw new Error('the stack has no edge');
  const module = new URL('./lifecycle-watchers.ts', import.meta.url);
  const workers: Worker<WatcherRequest>[] = Array.from({ length: o.clientProcesses }, () =>
    forkWorker(module),
  );
  const all = <T>(req: WatcherRequest) => Promise.all(workers.map((w) => w.call<T>(req)));
  const a = 2 + Math.floor(Math.random() * 250);
  try {
    const replies = await Promise.all(
      workers.map((w, k) =>
        w.call<OpenReply>({
          op: 'open',
          host: '127.0.0.1',
          port: edge.ports.ws,
          path,
          count: Math.floor(o.watchers / workers.length) + (k < o.watchers % workers.length ? 1 : 0),
          localAddresses: Array.from({ length: 4 }, (_, j) => `127.${a}.${k}.${j + 1}`),
          concurrency: 64,
        }),
      ),
    );
    const opened = replies.reduce((s, r) => s + r.opened, 0);
    await sleep(SETTLE_MS);
    const since = Date.now();
    await all({ op: 'reset', since });
    const cpu0 = cpuOf([edge.pid]);
    const clients0 = cpuOf(workers.map((w) => w.child.pid as number));
    await sleep(o.seconds * 1000);
    const end = Date.now();
    const edgeCpuS = cpuOf([edge.pid]) - cpu0;
    const clientCpuS = cpuOf(workers.map((w) => w.child.pid as number)) - clients0;
    // Messages appended just before the end are still on their way.
    await sleep(GRACE_MS);
    const stats = await all<WatcherStats>({ op: 'stats' });
    const d: Deliveries = mergeDeliveries(
      stats.map((s) => s.deliveries),
      since,
      end,
    );
    const logged = stack.rounds.countAppended(since, end);
    const figures = summarize(d, opened, label === 'plain' ? { round: logged.round } : logged).filter(
      (f) => label === 'lifecycle' || f.kind === 'round',
    );
    const sum = (k: 'heartbeats' | 'other' | 'unreadable') => stats.reduce((s, x) => s + x[k], 0);
    return {
      label,
      path,
      opened,
      failed: replies.reduce((s, r) => s + r.failed, 0),
      firstError: replies.find((r) => r.firstError)?.firstError,
      figures,
      deliveries: d.kind.length,
      heartbeats: sum('heartbeats'),
      other: sum('other'),
      unreadable: sum('unreadable'),
      wallS: (end - since) / 1000,
      edgeCpuS,
      clientCpuS,
    };
  } finally {
    await all({ op: 'close' }).catch(() => {});
    for (const w of workers) w.child.disconnect();
  }
}

/**
 * An idle window, plain watchers, lifecycle watchers, and an idle window again (the machine's load
 * drifts: the idle rate is taken on both sides).
 */
export async function runWatch(stack: LifecycleStack, o: WatchOptions): Promise<WatchRun> {
  const edge = stack.edge;
  if (!edge) throw new Error('the stack has no edge');
  const idleWindow = async () => {
    const t0 = Date.now();
    const cpu0 = cpuOf([edge.pid]);
    await sleep(o.idleSeconds * 1000);
    return { wallS: (Date.now() - t0) / 1000, edgeCpuS: cpuOf([edge.pid]) - cpu0 };
  };
  const before = await idleWindow();
  const plain = await measure(stack, 'plain', '/ws/crash', o);
  const lifecycle = await measure(stack, 'lifecycle', '/ws/crash?envelope=1&lifecycle=1', o);
  const after = await idleWindow();
  const idle = { wallS: before.wallS + after.wallS, edgeCpuS: before.edgeCpuS + after.edgeCpuS };
  return { idle, variants: [plain, lifecycle] };
}
