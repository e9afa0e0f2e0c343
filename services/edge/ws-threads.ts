/**
 * WebSocket fan-out on more than one core ("both cores used where the server allows
 * it"): EDGE_WS_THREADS − 1 worker threads, each a WebSocket-only edge (its own rounds consumer,
 * key table and uWebSockets.js app) listening on the main edge's WebSocket port. uWebSockets.js
 * listens with SO_REUSEPORT, so the kernel spreads new connections over the threads' listeners
 * (by the hash of their addresses); a round is then published by every thread to its own sockets,
 * each thread on a core of its own. A thread is what a second edge process behind a load balancer
 * would be, with no second process to run: every subscription, resume and close rule is the same
 * code (services/edge/edge.ts with the WebSocket transport only).
 *
 * The main thread's /metrics adds the threads' metrics (prom-client's AggregatorRegistry.aggregate),
 * each series labelled with its `thread` (1, 2, …; the main thread's have none), without their
 * process_* and nodejs_* series, which the main thread already reports for the whole process.
 */
import { Worker } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Logger } from '../../lib/logger.ts';

/** One metric as prom-client's getMetricsAsJSON gives it. */
export type MetricJson = MetricObjectWithValues<MetricValue<string>>;

/** Messages from the main thread to a worker. */
export type ToWorker =
  | { readonly type: 'stop'; readonly drainMs: number }
  | { readonly type: 'metrics'; readonly id: number };

/** Messages from a worker to the main thread. */
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'metrics'; readonly id: number; readonly metrics: MetricJson[] }
  | { readonly type: 'stopped' };

/** What a worker is started with (its workerData). */
export interface WorkerData {
  /** The main edge's WebSocket port (the one EDGE_WS_PORT=0 gave, if so). */
  readonly wsPort: number;
  readonly index: number;
}

export interface WsThreads {
  readonly count: number;
  /** Each thread's metrics (JSON), process_* and nodejs_* left out; a thread that does not answer in 2 s is skipped. */
  metrics(): Promise<MetricJson[][]>;
  /** Asks every thread to drain its sockets over `drainMs` and stop; resolves when all have exited. */
  stop(drainMs: number): Promise<void>;
}

/**
 * Starts `count` WebSocket worker threads on `wsPort`; resolves when each reports ready.
 * @throws Error naming the thread that failed to start (the others are stopped first).
 */
export async function startWsThreads(count: number, wsPort: number, logger: Logger): Promise<WsThreads> {
  const log = logger.child({ component: 'ws-threads' });
  const workers: Worker[] = [];
  const exited: Promise<void>[] = [];
  const waiters = new Map<number, (m: MetricJson[]) => void>();
  let nextId = 0;

  const stopAll = async (drainMs: number) => {
    for (const w of workers) w.postMessage({ type: 'stop', drainMs } satisfies ToWorker);
    await Promise.all(exited);
  };

  try {
    await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const index = i + 1;
        const w = new Worker(new URL('./ws-worker.ts', import.meta.url), {
          workerData: { wsPort, index } satisfies WorkerData,
        });
        workers.push(w);
        exited.push(new Promise((resolve) => w.once('exit', () => resolve())));
        w.on('message', (m: FromWorker) => {
          if (m.type === 'metrics') waiters.get(m.id)?.(m.metrics);
        });
        w.on('error', (err) => log.error({ err, thread: index }, 'WebSocket thread failed'));
        return new Promise<void>((resolve, reject) => {
          const onMessage = (m: FromWorker) => {
            if (m.type === 'ready') {
              w.off('message', onMessage);
              resolve();
            } else if (m.type === 'failed') reject(new Error(`WebSocket thread ${index}: ${m.message}`));
          };
          w.on('message', onMessage);
          w.once('exit', (code) =>
            reject(new Error(`WebSocket thread ${index} exited with ${code} before it was ready`)),
          );
        });
      }),
    );
  } catch (err) {
    await stopAll(0);
    throw err;
  }
  log.info({ threads: count, port: wsPort }, 'WebSocket threads started');

  return {
    count,
    async metrics() {
      const asks = workers.map(
        (w) =>
          new Promise<MetricJson[]>((resolve) => {
            const id = nextId++;
            const timer = setTimeout(() => {
              waiters.delete(id);
              resolve([]);
            }, 2_000);
            waiters.set(id, (m) => {
              clearTimeout(timer);
              waiters.delete(id);
              resolve(m);
            });
            w.postMessage({ type: 'metrics', id } satisfies ToWorker);
          }),
      );
      return Promise.all(asks);
    },
    stop: stopAll,
  };
}
