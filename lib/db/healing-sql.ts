/**
 * A postgres.js pool for request-serving processes (the API) that survives a database restart:
 * after a connection-level error, or when a query has had no answer for `stallMs`, the pool is
 * replaced by a fresh one and the old one is ended (its stalled queries fail with
 * CONNECTION_ENDED/DESTROYED, which the API maps to 503).
 *
 * Why: postgres.js 3.4.9 (the latest release) can leave a connection that closed while a query
 * was buffered unable to send again, so queries on it wait for ever (porsager/postgres#1154,
 * #1208; reproduced here by stopping Postgres under a pool with queries in flight). A request
 * must get a 503 while the database is away and a 200 once it is back, not hang. The projector
 * does the same in lib/db/gate.ts, where it also retries.
 *
 * The returned `Sql` forwards every call to the current pool, so code that captured it at start-up
 * follows the replacements. Only queries that are awaited (their `then` called) are watched, so a
 * query fragment built with sql`…` is never run on its own.
 */

import type { Logger } from '../logger.ts';
import { isConnectionError, type Sql } from './pool.ts';

export interface HealingSqlOptions {
  /** The pool to start with (ended by the wrapper like the later ones). */
  readonly first: Sql;
  /** Makes a replacement pool. */
  readonly make: () => Sql;
  /** A query with no answer for this long, ms, counts as a stalled connection. */
  readonly stallMs: number;
  readonly logger: Logger;
}

/** Replacements are at least this far apart, ms: an outage fails every query at once. */
const MIN_INTERVAL_MS = 1000;

export interface HealingSql {
  /** The pool to hand to the application. */
  readonly sql: Sql;
  /** Pools replaced so far. */
  replacements(): number;
}

type Thenable = { then: (f?: (v: unknown) => unknown, r?: (e: unknown) => unknown) => unknown };

/** Wraps a pool; see the module comment. */
export function createHealingSql(options: HealingSqlOptions): HealingSql {
  const log = options.logger.child({ component: 'healing-sql' });
  let current = options.first;
  let replaced = 0;
  let lastAt = 0;

  /** Replaces `failed` unless it was replaced already (its other queries fail too) or very recently. */
  const heal = (failed: Sql, reason: string, err?: unknown) => {
    const now = Date.now();
    if (failed !== current || now - lastAt < MIN_INTERVAL_MS) return;
    lastAt = now;
    const old = current;
    current = options.make();
    replaced++;
    log.warn({ reason, err: (err as Error | undefined)?.message }, 'replacing the database pool');
    void old.end({ timeout: 1 }).catch(() => {});
  };

  /** Watches `q` from the moment it is awaited: a stall or a connection error replaces the pool. */
  const watch = <T>(pool: Sql, q: T): T => {
    const t = q as unknown as Thenable | undefined;
    if (!t || typeof t.then !== 'function') return q;
    const then = t.then;
    let watched = false;
    // biome-ignore lint/suspicious/noThenProperty: the query is watched from the moment it is awaited
    t.then = function (this: unknown, onFulfilled, onRejected) {
      if (watched) return then.call(this, onFulfilled, onRejected);
      watched = true;
      const timer = setTimeout(
        () => heal(pool, `a query had no answer for ${options.stallMs} ms`),
        options.stallMs,
      );
      timer.unref?.();
      return then.call(
        this,
        (v) => {
          clearTimeout(timer);
          return onFulfilled ? onFulfilled(v) : v;
        },
        (err) => {
          clearTimeout(timer);
          if (isConnectionError(err)) heal(pool, 'connection error', err);
          if (onRejected) return onRejected(err);
          throw err;
        },
      );
    };
    return q;
  };

  const watchedMethods = new Set<PropertyKey>(['unsafe', 'begin', 'file']);
  const proxy = new Proxy(function healingSql() {}, {
    apply: (_target, _this, args: unknown[]) =>
      watch(current, (current as unknown as (...a: unknown[]) => unknown)(...args)),
    get: (_target, prop) => {
      const pool = current;
      if (prop === 'end') return (o?: { timeout?: number }) => pool.end(o);
      const value = (pool as unknown as Record<PropertyKey, unknown>)[prop];
      if (typeof value !== 'function') return value;
      const fn = value as (...a: unknown[]) => unknown;
      return watchedMethods.has(prop) ? (...a: unknown[]) => watch(pool, fn(...a)) : fn;
    },
  }) as unknown as Sql;

  return { sql: proxy, replacements: () => replaced };
}
