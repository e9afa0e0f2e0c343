/**
 * Read-model rebuilds started from the ops console, run as background jobs inside the API process
 * and kept in memory (docs/decisions/console/0004-ops-rebuilds-in-the-api-process.md): each job is
 * the rebuild of lib/rebuild/rebuild.ts (replay into a shadow schema, follow the live projector,
 * check, swap, compare), stopped after the check until an operator asks for the swap.
 *
 * States: `running` (replaying and following), `caught-up` (checked: the shadow equals the live
 * tables at one offset; waiting for the swap), `swapping` (asked to swap: catching up, locked
 * swap, comparison), `swapped`, `failed` (with the rebuild's error code and message; nothing live
 * changed unless the code says otherwise, lib/rebuild/errors.ts).
 *
 * One job per read model at a time in this process (409 otherwise); the rebuild's own Postgres
 * advisory lock keeps apart a job and a rebuild elsewhere (the command line, another API node):
 * the later one fails at once with REBUILD_RUNNING, answered 409 as well.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { SharedConfig } from '../../../lib/config/shared.ts';
import { createSql, type Sql } from '../../../lib/db/pool.ts';
import { AppError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { RebuildError } from '../../../lib/rebuild/errors.ts';
import { READ_MODELS } from '../../../lib/rebuild/models.ts';
import { type RebuildResult, rebuildReadModel } from '../../../lib/rebuild/rebuild.ts';
import { ConflictError, NotFoundError } from '../errors.ts';

/** Longest a start request waits for the rebuild to take its lock (or fail), ms. */
const START_WAIT_MS = 10_000;

/** The read models a rebuild knows (lib/rebuild/models.ts), by name. */
export const READ_MODEL_NAMES = [...READ_MODELS.keys()] as [string, ...string[]];

export type RebuildState = 'running' | 'caught-up' | 'swapping' | 'swapped' | 'failed';

export interface RebuildView {
  readonly rebuild_id: string;
  readonly read_model: string;
  readonly state: RebuildState;
  readonly progress: {
    /** Offsets replayed into the shadow tables, and the live position they are replayed towards. */
    readonly replayed: number;
    readonly target: number;
    /** The last step the rebuild reported (e.g. `checking the shadow against the live tables`). */
    readonly step: string | null;
  };
  readonly started_at: string;
  readonly finished_at: string | null;
  /** Why it failed: the rebuild's code (lib/rebuild/errors.ts) and message; null unless failed. */
  readonly error: { readonly code: string; readonly message: string } | null;
  /** Figures of a swapped rebuild; null before. */
  readonly result: {
    readonly records: number;
    readonly events: number;
    readonly skipped: number;
    readonly replay_ms: number;
    readonly locked_ms: number;
    /** Whether the row-by-row comparison as of the swap found the tables equal. */
    readonly identical_after_swap: boolean | null;
    /** Schema keeping the replaced tables when that comparison found differences. */
    readonly retired_schema: string | null;
  } | null;
}

interface Job {
  readonly id: string;
  readonly model: string;
  state: RebuildState;
  replayed: number;
  target: number;
  step: string | null;
  readonly startedAt: number;
  finishedAt: number | null;
  error: { code: string; message: string } | null;
  result: RebuildResult | null;
  /** Set while `caught-up`: lets the swap go on, or ends the rebuild without it. */
  approve?: () => void;
  cancel?: (err: Error) => void;
  done: Promise<void>;
}

export interface RebuildJobsDeps {
  /** The API's configuration: broker and namespace, database and schema, currencies. */
  readonly config: Pick<SharedConfig, 'kafka' | 'db' | 'money'>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** Clock, Unix ms (tests). */
  readonly now?: () => number;
}

export interface RebuildJobs {
  /**
   * Starts a rebuild of `model` and resolves once it has taken its lock (or failed before), or
   * after 10 s still `running`.
   * @throws ConflictError REBUILD_RUNNING when one of `model` runs here or elsewhere.
   */
  start(model: string): Promise<RebuildView>;
  list(): RebuildView[];
  /** @throws NotFoundError REBUILD_NOT_FOUND. */
  get(id: string): RebuildView;
  /**
   * Lets a `caught-up` rebuild swap, and waits up to `waitMs` for the swap to end.
   * @throws NotFoundError REBUILD_NOT_FOUND; ConflictError REBUILD_NOT_SWAPPABLE in another state.
   */
  swap(id: string, waitMs?: number): Promise<RebuildView>;
  /** Ends the rebuilds waiting for a swap (nothing swapped) and waits up to `waitMs` for the others. */
  close(waitMs?: number): Promise<void>;
}

/** Rebuilds of one API process. */
export function createRebuildJobs(deps: RebuildJobsDeps): RebuildJobs {
  const now = deps.now ?? Date.now;
  const jobs = new Map<string, Job>();
  const iso = (ms: number) => new Date(ms).toISOString();
  const view = (j: Job): RebuildView => ({
    rebuild_id: j.id,
    read_model: j.model,
    state: j.state,
    progress: { replayed: j.replayed, target: j.target, step: j.step },
    started_at: iso(j.startedAt),
    finished_at: j.finishedAt === null ? null : iso(j.finishedAt),
    error: j.error,
    result: j.result && {
      records: j.result.records,
      events: j.result.events,
      skipped: j.result.skipped,
      replay_ms: Math.round(j.result.replayMs),
      locked_ms: Math.round(j.result.lockedMs),
      identical_after_swap: j.result.after?.identical ?? null,
      retired_schema: j.result.retiredSchema,
    },
  });
  const find = (id: string): Job => {
    const j = jobs.get(id);
    if (!j) throw new NotFoundError('REBUILD_NOT_FOUND', `no rebuild ${id} in this API process`);
    return j;
  };
  const active = (j: Job) => j.state !== 'swapped' && j.state !== 'failed';

  async function run(j: Job, sql: Sql, onLocked: () => void): Promise<void> {
    try {
      j.result = await rebuildReadModel({
        config: { ...deps.config, projector: { group: 'api-ops' } },
        kafka: deps.kafka,
        sql,
        logger: deps.logger,
        model: j.model,
        onProgress: (p) => {
          if (p.phase === 'replay') {
            j.replayed = p.done;
            j.target = p.total;
          } else {
            j.step = p.message;
            onLocked();
          }
        },
        beforeSwap: () =>
          new Promise<void>((resolve, reject) => {
            j.state = 'caught-up';
            j.approve = () => {
              j.state = 'swapping';
              resolve();
            };
            j.cancel = reject;
          }),
      });
      j.state = 'swapped';
    } catch (err) {
      j.state = 'failed';
      j.error = {
        code: err instanceof AppError ? err.code : 'INTERNAL',
        message: (err as Error).message,
      };
      if (!(err instanceof RebuildError)) deps.logger.error({ err, model: j.model }, 'rebuild failed');
    } finally {
      j.finishedAt = now();
      j.approve = undefined;
      j.cancel = undefined;
      await sql.end({ timeout: 5 }).catch(() => {});
    }
  }

  return {
    async start(model) {
      const running = [...jobs.values()].find((j) => j.model === model && active(j));
      if (running)
        throw new ConflictError(
          'REBUILD_RUNNING',
          `rebuild ${running.id} of ${model} is ${running.state}; one rebuild per read model at a time`,
        );
      // A pool of its own: a long replay must not hold the request pool's connections.
      const sql = createSql(deps.config, { max: 4 });
      let locked: () => void = () => {};
      const lockedOrDone = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const j: Job = {
        id: `rb_${randomUUID()}`,
        model,
        state: 'running',
        replayed: 0,
        target: 0,
        step: null,
        startedAt: now(),
        finishedAt: null,
        error: null,
        result: null,
        done: Promise.resolve(),
      };
      jobs.set(j.id, j);
      j.done = run(j, sql, () => locked()).finally(() => locked());
      // Bounded: a broker or database that is slow to answer leaves the job `running`, visible by GET.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        lockedOrDone,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, START_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (j.state === 'failed' && j.error?.code === 'REBUILD_RUNNING')
        throw new ConflictError('REBUILD_RUNNING', j.error.message);
      return view(j);
    },
    list: () => [...jobs.values()].sort((a, b) => b.startedAt - a.startedAt).map(view),
    get: (id) => view(find(id)),
    async swap(id, waitMs = 30_000) {
      const j = find(id);
      if (j.state !== 'caught-up' || !j.approve)
        throw new ConflictError(
          'REBUILD_NOT_SWAPPABLE',
          `rebuild ${id} is ${j.state}; only a caught-up rebuild can be swapped`,
        );
      j.approve();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        j.done,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
      return view(j);
    },
    async close(waitMs = 30_000) {
      for (const j of jobs.values())
        j.cancel?.(new RebuildError('CANCELLED', 'the API is stopping; nothing was swapped'));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...jobs.values()].map((j) => j.done)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
