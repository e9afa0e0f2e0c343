/**
 * The locked step of a rebuild: one transaction that stops the live projector of the model,
 * brings the shadow to exactly the live checkpoints, opens a REPEATABLE READ snapshot that sees
 * both sides at those offsets, and (mode `swap`) moves the live tables out and the shadow tables
 * in, with the checkpoints, before committing. Design and reasons: docs/decisions/projector/0005-rebuild-shadow-schema-following-the-live-checkpoints.md.
 *
 * - `check` locks the live tables IN EXCLUSIVE MODE: reads go on, the projector's write (every
 *   one of its statements writes these tables) waits. Nothing is changed; the snapshot is for the
 *   comparison before a swap.
 * - `swap` locks them IN ACCESS EXCLUSIVE MODE from the start (never an upgrade from a weaker lock,
 *   which could deadlock with a writer that holds a read lock while waiting for its write lock).
 *   Readers wait for the lock's few hundred ms; `lock_timeout` bounds how long the lock request
 *   itself may queue (queued, it holds back every later reader), and a timed-out or deadlocked
 *   attempt is rolled back whole and retried.
 */
import pRetry from 'p-retry';
import type { Sql } from '../db/pool.ts';
import type { Logger } from '../logger.ts';
import { RebuildError } from './errors.ts';
import type { ReadModel } from './models.ts';
import { checkpointsIn, type RebuildSchemas } from './shadow.ts';
import { ident, qualified } from './sql-names.ts';

/** An open REPEATABLE READ transaction on a connection of its own. */
export interface Snapshot {
  readonly sql: Sql;
  /** Ends the transaction and gives the connection back. */
  close(): Promise<void>;
}

export interface LockedStepOptions {
  /** Pool on the live schema. */
  readonly sql: Sql;
  readonly schemas: RebuildSchemas;
  readonly model: ReadModel;
  /** Full topic name (namespace included), as stored in projection_checkpoints. */
  readonly topic: string;
  readonly mode: 'check' | 'swap';
  /** Primary-key columns per table, for copying carried columns. */
  readonly keys: ReadonlyMap<string, readonly string[]>;
  /** Longest wait for the lock per attempt, ms. */
  readonly lockTimeoutMs: number;
  /** Attempts before giving up with SWAP_LOCK_TIMEOUT. */
  readonly attempts: number;
  /** Brings the shadow to `targets` (the live checkpoints); runs while the lock is held. */
  catchUp(targets: ReadonlyMap<number, bigint>): Promise<void>;
  readonly logger: Logger;
}

export interface LockedStepResult {
  /** The offsets both sides stood at (live checkpoints under the lock). */
  readonly checkpoints: ReadonlyMap<number, bigint>;
  /** Sees the live and the shadow tables as they were at `checkpoints`; the caller closes it. */
  readonly snapshot: Snapshot;
  /** How long the lock was held, ms. */
  readonly lockedMs: number;
  /** Records the shadow caught up while the lock was held. */
  readonly caughtUp: bigint;
}

const LOCK_ERRORS = new Set(['55P03', '40P01']); // lock_not_available (lock_timeout), deadlock_detected
const sameMap = (a: ReadonlyMap<number, bigint>, b: ReadonlyMap<number, bigint>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
const sum = (m: ReadonlyMap<number, bigint>) => [...m.values()].reduce((s, v) => s + v, 0n);

async function openSnapshot(sql: Sql): Promise<Snapshot> {
  const conn = await sql.reserve();
  try {
    await conn.unsafe('begin isolation level repeatable read, read only');
    await conn.unsafe('select 1'); // the snapshot is taken by the first statement
  } catch (err) {
    conn.release();
    throw err;
  }
  return {
    sql: conn as unknown as Sql,
    async close() {
      await conn.unsafe('commit').catch(() => {});
      conn.release();
    },
  };
}

/**
 * Runs the locked step (see the module comment).
 * @throws RebuildError SWAP_LOCK_TIMEOUT when no attempt got the lock; CHECKPOINT_MISMATCH when
 *   the shadow is not at the live offsets after the catch-up (the transaction is rolled back);
 *   whatever `catchUp` throws.
 */
export async function lockedStep(o: LockedStepOptions): Promise<LockedStepResult> {
  const { schemas, model, topic } = o;
  const live = (t: string) => qualified(schemas.live, t);
  const tables = model.tables.map(live).join(', ');
  const lockMode = o.mode === 'swap' ? 'access exclusive' : 'exclusive';
  const log = o.logger.child({ component: 'rebuild-swap', model: model.name, mode: o.mode });

  const attempt = async (): Promise<LockedStepResult> => {
    let snapshot: Snapshot | undefined;
    try {
      return await o.sql.begin(async (t) => {
        const tx = t as unknown as Sql; // the transaction's connection, used like the pool
        await tx`select set_config('lock_timeout', ${`${o.lockTimeoutMs}ms`}, true)`;
        await tx.unsafe(`lock table ${tables} in ${lockMode} mode`);
        const locked = performance.now();
        const checkpoints = await checkpointsIn(tx, schemas.live, model.projection, topic);
        const before = await checkpointsIn(tx, schemas.shadow, model.projection, topic);
        await o.catchUp(checkpoints);
        const shadow = await checkpointsIn(tx, schemas.shadow, model.projection, topic);
        if (!sameMap(shadow, checkpoints))
          throw new RebuildError(
            'CHECKPOINT_MISMATCH',
            `shadow checkpoints ${JSON.stringify(Object.fromEntries([...shadow].map(([p, v]) => [p, String(v)])))} ` +
              `are not the live ones ${JSON.stringify(Object.fromEntries([...checkpoints].map(([p, v]) => [p, String(v)])))}`,
          );
        snapshot = await openSnapshot(o.sql);
        if (o.mode === 'swap') await moveTables(tx, o);
        return {
          checkpoints,
          snapshot,
          lockedMs: performance.now() - locked,
          caughtUp: sum(shadow) - sum(before),
        };
      });
    } catch (err) {
      await snapshot?.close();
      throw err;
    }
  };

  try {
    return await pRetry(attempt, {
      retries: Math.max(0, o.attempts - 1),
      minTimeout: 200,
      maxTimeout: 2000,
      shouldRetry: (err) => LOCK_ERRORS.has((err as { code?: string }).code ?? ''),
      onFailedAttempt: (err) =>
        log.warn(
          { attempt: err.attemptNumber, err: err.message },
          'could not take the rebuild lock; retrying',
        ),
    });
  } catch (err) {
    if (!LOCK_ERRORS.has((err as { code?: string }).code ?? '')) throw err;
    throw new RebuildError(
      'SWAP_LOCK_TIMEOUT',
      `could not lock ${tables} within ${o.lockTimeoutMs} ms in ${o.attempts} attempts (long-running readers?)`,
      { cause: err },
    );
  }
}

/** Inside the locked transaction: carried columns, then tables out and in, then checkpoints. */
async function moveTables(tx: Sql, o: LockedStepOptions): Promise<void> {
  const { schemas, model, topic } = o;
  for (const [table, columns] of Object.entries(model.carried)) {
    const key = o.keys.get(table) ?? [];
    if (columns.length === 0 || key.length === 0) continue;
    await tx.unsafe(
      `update ${qualified(schemas.shadow, table)} s set ${columns.map((c) => `${ident(c)} = l.${ident(c)}`).join(', ')}
       from ${qualified(schemas.live, table)} l where ${key.map((k) => `s.${ident(k)} = l.${ident(k)}`).join(' and ')}`,
    );
  }
  await tx.unsafe(`create schema if not exists ${ident(schemas.retired)}`);
  for (const t of model.tables)
    await tx.unsafe(`alter table ${qualified(schemas.live, t)} set schema ${ident(schemas.retired)}`);
  for (const t of model.tables)
    await tx.unsafe(`alter table ${qualified(schemas.shadow, t)} set schema ${ident(schemas.live)}`);
  const cp = (s: string) => qualified(s, 'projection_checkpoints');
  await tx.unsafe(`delete from ${cp(schemas.live)} where projection = $1 and topic = $2`, [
    model.projection,
    topic,
  ]);
  await tx.unsafe(
    `insert into ${cp(schemas.live)} (projection, topic, "partition", "offset", updated_at)
     select projection, topic, "partition", "offset", now() from ${cp(schemas.shadow)}
     where projection = $1 and topic = $2`,
    [model.projection, topic],
  );
}
