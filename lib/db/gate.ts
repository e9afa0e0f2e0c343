/**
 * A consumer's view of Postgres (checkpointed-consumer.ts): runs database work with retries (capped exponential backoff
 * with jitter, forever, through p-retry; docs/conventions.md §7) and tracks whether the database is
 * reachable, for `/ready`. While nothing is written, a `select 1` probe keeps that state honest.
 *
 * After a connection-level failure the gate replaces its pool: postgres.js 3.4.9 (the latest
 * release) can leave a connection that closed while a write was buffered unable to send again,
 * so its next queries hang (porsager/postgres#1154, #1208, unfixed upstream). A fresh pool has
 * none of that state. Pools the gate created are ended by it; the first one is the caller's.
 */
import pRetry from 'p-retry';
import type { Logger } from '../logger.ts';
import { isConnectionError, type Sql } from './pool.ts';

/** Returned instead of a result when the gate's signal aborted the retries. */
export const ABORTED = Symbol('aborted');
export type Aborted = typeof ABORTED;

export interface DbGateOptions {
  /** The first pool (the caller's: never ended by the gate). */
  readonly sql: Sql;
  /** Makes a replacement pool after a connection-level failure. */
  readonly newPool: () => Sql;
  readonly log: Logger;
  /** Aborts pending retries (the projector is stopping). */
  readonly signal: AbortSignal;
  /** First and longest wait between attempts, ms. */
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  /** After this long (ms) without a successful database call, probe with `select 1`. */
  readonly probeIntervalMs: number;
  /** Called on every failed attempt (metrics). */
  readonly onFailure?: (err: unknown) => void;
}

export interface DbGate {
  /**
   * Runs `fn` until it succeeds, logging each failed attempt with `what`; `heartbeat` runs between
   * attempts (and an error it throws ends the retries, e.g. a Kafka rebalance).
   * @returns the result (also when the signal fired while a successful attempt was in flight), or
   *   ABORTED when the signal fired and no attempt succeeded (after the attempt in flight settled).
   */
  run<T>(what: object, fn: (sql: Sql) => Promise<T>, heartbeat?: () => Promise<void>): Promise<T | Aborted>;
  /** False from a failed database call until the next successful one. */
  isUp(): boolean;
  /** Why the database is down (the last failure's message), or undefined while it is up. */
  downReason(): string | undefined;
  /** Starts the idle probe (unref'd timer). */
  startProbe(): void;
  /** Stops the probe and ends the pools the gate created. */
  close(): Promise<void>;
}

export function createDbGate(o: DbGateOptions): DbGate {
  let up = true;
  let reason: string | undefined;
  let lastOkAt = 0;
  let probing = false;
  let timer: NodeJS.Timeout | undefined;
  let current = o.sql;
  const own: Sql[] = [];

  function replacePool(err: unknown): void {
    if (!isConnectionError(err)) return;
    const old = current;
    current = o.newPool();
    own.push(current);
    if (old !== o.sql) {
      own.splice(own.indexOf(old), 1);
      void old.end({ timeout: 0 }).catch(() => {});
    }
  }

  function state(ok: boolean, err?: unknown): void {
    if (ok) lastOkAt = Date.now();
    reason = ok
      ? undefined
      : err instanceof Error
        ? err.message || (err as { code?: string }).code
        : String(err);
    if (ok === up) return;
    up = ok;
    if (ok) o.log.info('postgres reachable again');
    else o.log.warn({ err }, 'postgres unreachable; consumer paused until it returns');
  }

  async function probe(): Promise<void> {
    if (probing || Date.now() - lastOkAt < o.probeIntervalMs) return;
    probing = true;
    try {
      await current`select 1`;
      state(true);
    } catch (err) {
      state(false, err);
      replacePool(err);
    } finally {
      probing = false;
    }
  }

  return {
    async run(what, fn, heartbeat) {
      let attempt: ReturnType<typeof fn> | undefined;
      try {
        return await pRetry(
          async () => {
            const p = fn(current);
            attempt = p;
            const r = await p;
            state(true);
            return r;
          },
          {
            // `forever` keeps retrying at the last (capped) delay; retries: Infinity would make
            // the retry library precompute an endless list of delays.
            retries: 10,
            forever: true,
            minTimeout: o.retryMinMs,
            maxTimeout: o.retryMaxMs,
            factor: 2,
            randomize: true,
            signal: o.signal,
            onFailedAttempt: async (err) => {
              state(false, err);
              replacePool(err);
              o.onFailure?.(err);
              o.log.warn({ ...what, attempt: err.attemptNumber, err }, 'postgres call failed; retrying');
              if (heartbeat && !o.signal.aborted) await heartbeat();
            },
          },
        );
      } catch (err) {
        if (!o.signal.aborted) throw err;
        // The abort rejects at once, but the attempt in flight may still succeed: then its result
        // stands, so the caller resolves and commits what was written (a clean stop leaves the
        // group offset at the checkpoint).
        if (!attempt) return ABORTED;
        try {
          return await attempt;
        } catch {
          return ABORTED;
        }
      }
    },
    isUp: () => up,
    downReason: () => reason,
    startProbe() {
      timer = setInterval(() => void probe(), Math.max(100, Math.floor(o.probeIntervalMs / 2)));
      timer.unref();
    },
    async close() {
      if (timer) clearInterval(timer);
      await Promise.allSettled(own.splice(0).map((p) => p.end({ timeout: 5 })));
    },
  };
}
