/**
 * Rebuild of one read model from the log with no downtime: replay its topic from
 * the first offset into shadow tables, follow the live projector until close behind it, check the
 * shadow against the live tables at one offset, swap them in one transaction, and compare again
 * row by row as of the swap. Steps and their reasons: docs/decisions/projector/0005-rebuild-shadow-schema-following-the-live-checkpoints.md.
 *
 * The rebuild follows the live projector's checkpoints, not the topic's end: it reproduces the
 * live model at the live position, so the live projector continues after the swap from the
 * offsets it had, with nothing lost or doubled.
 */
import type { Kafka } from 'kafkajs';
import { currencyTable } from '../../rules/money/currencies.ts';
import type { SharedConfig } from '../config/shared.ts';
import { isConnectionError, type Sql } from '../db/pool.ts';
import { topicName } from '../log/topics.ts';
import type { Logger } from '../logger.ts';
import { type Comparison, compareTables, tableShapes } from './compare.ts';
import { RebuildError } from './errors.ts';
import { createFollower, type Follower } from './follower.ts';
import { READ_MODELS, type ReadModel } from './models.ts';
import {
  checkLiveTables,
  checkpointsIn,
  createShadow,
  dropSchema,
  poolFor,
  rebuildSchemas,
  takeRebuildLock,
} from './shadow.ts';
import { lockedStep } from './swap.ts';

/** Progress: offsets replayed of the current target, or a step starting. */
export type RebuildProgress =
  | { readonly phase: 'replay'; readonly done: number; readonly total: number }
  | { readonly phase: 'step'; readonly message: string };

/**
 * What a rebuild reads of the configuration: the broker and namespace, the database and schema, the
 * currency table (CRYPTO_CURRENCIES), and the prefix of its throw-away consumer group
 * (`projector.group`, PROJECTOR_GROUP in the projector's command line).
 */
export type RebuildConfig = Pick<SharedConfig, 'kafka' | 'db' | 'money'> & {
  readonly projector: { readonly group: string };
};

export interface RebuildOptions {
  readonly config: RebuildConfig;
  readonly kafka: Kafka;
  /** Pool on the live schema (`config.db.schema`); not ended here. */
  readonly sql: Sql;
  readonly logger: Logger;
  /** A name of READ_MODELS. */
  readonly model: string;
  /** false: build and check only, change nothing live (default true). */
  readonly swap?: boolean;
  /** Swap even when the check before the swap finds differences (default false). */
  readonly acceptDifferences?: boolean;
  /** Longest wait for the swap's lock per attempt, ms (2000), and attempts (5). */
  readonly lockTimeoutMs?: number;
  readonly lockAttempts?: number;
  /** The locked step starts once the live projector is at most this many records ahead (1000). */
  readonly swapLag?: number;
  /** Differing rows reported per table (20). */
  readonly maxReported?: number;
  /** A replay that does not move for this long fails, ms (60000). */
  readonly stallMs?: number;
  readonly onProgress?: (p: RebuildProgress) => void;
  /**
   * With `swap`: called once the shadow passed the check before the swap, and the swap waits until
   * it resolves (the ops API's swap on request); while it waits the shadow stays where it was and
   * catches up with the live projector afterwards. A rejection ends the rebuild with that error,
   * nothing swapped and the shadow dropped.
   */
  readonly beforeSwap?: () => Promise<void>;
}

export interface RebuildResult {
  readonly model: string;
  readonly swapped: boolean;
  /** Offsets replayed into the shadow tables in all; records projected; undecodable ones skipped. */
  readonly records: number;
  readonly events: number;
  readonly skipped: number;
  /** The replay up to the live position at the start: ms and offsets per second. */
  readonly replayMs: number;
  readonly recordsPerSecond: number;
  /** How long the swap's lock was held, ms, and the records caught up meanwhile (0 without a swap). */
  readonly lockedMs: number;
  readonly lockedRecords: number;
  readonly totalMs: number;
  /** Partition → offset both sides stood at, at the swap (or at the check without a swap). */
  readonly checkpoints: Readonly<Record<string, string>>;
  /** Check before the swap (live vs shadow, same offsets). */
  readonly before: Comparison;
  /** Row-by-row comparison as of the swap (replaced vs rebuilt tables); null without a swap. */
  readonly after: Comparison | null;
  /** Schema holding the replaced tables when `after` found differences (else dropped: null). */
  readonly retiredSchema: string | null;
}

/** The read model called `name`. @throws RebuildError UNKNOWN_READ_MODEL. */
function readModel(name: string): ReadModel {
  const m = READ_MODELS.get(name);
  if (!m)
    throw new RebuildError(
      'UNKNOWN_READ_MODEL',
      `unknown read model "${name}"; one of: ${[...READ_MODELS.keys()].join(', ')}`,
    );
  return m;
}

/** Low offset and existence of `topic`. @throws RebuildError BROKER_UNREACHABLE or TOPIC_MISSING. */
async function topicStart(kafka: Kafka, config: RebuildConfig, topic: string): Promise<Map<number, bigint>> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics = await admin.listTopics();
    if (!topics.includes(topic))
      throw new RebuildError(
        'TOPIC_MISSING',
        `topic ${topic} does not exist (TOPIC_NAMESPACE "${config.kafka.topicNamespace}")`,
      );
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, BigInt(o.low)]));
  } catch (err) {
    if (err instanceof RebuildError) throw err;
    throw new RebuildError(
      'BROKER_UNREACHABLE',
      `cannot reach the Kafka brokers ${config.kafka.brokers.join(',')}: ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Rebuilds `opts.model` as described above.
 * @throws RebuildError (see errors.ts) for every expected refusal, with nothing changed except when
 *   the code says otherwise; DIFFERENCES before the swap carries the comparison.
 */
export async function rebuildReadModel(opts: RebuildOptions): Promise<RebuildResult> {
  const started = performance.now();
  const model = readModel(opts.model);
  const { config, kafka, sql } = opts;
  const schemas = rebuildSchemas(config.db.schema, model);
  const topic = topicName(config, model.topic);
  const step = (message: string) => opts.onProgress?.({ phase: 'step', message });
  const log = opts.logger.child({ component: 'rebuild', model: model.name });

  try {
    await sql`select 1`;
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    throw new RebuildError('DATABASE_UNREACHABLE', `cannot reach Postgres: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const low = await topicStart(kafka, config, topic);
  await checkLiveTables(sql, schemas, model);
  const shapes = await tableShapes(sql, schemas.live, model);
  const lock = await takeRebuildLock(sql, schemas, model);

  const shadowSql = poolFor(config, schemas.shadow);
  let follower: Follower | undefined;
  let keepRetired = false;
  let target = new Map<number, bigint>();
  const liveCheckpoints = () => checkpointsIn(sql, schemas.live, model.projection, topic);
  /** Offsets of `m` past the first retained offset, over all partitions (absent = none). */
  const covered = (m: ReadonlyMap<number, bigint>) =>
    Number([...low].reduce((s, [p, l]) => s + ((m.get(p) ?? l) > l ? (m.get(p) as bigint) - l : 0n), 0n));
  const report = () =>
    opts.onProgress?.({
      phase: 'replay',
      done: covered(follower?.positions() ?? new Map()),
      total: covered(target),
    });
  const advance = async (next: Map<number, bigint>) => {
    for (const [p, t] of next) if ((target.get(p) ?? 0n) < t) target.set(p, t);
    report();
    await follower?.advanceTo(next);
  };
  /** Follows the live checkpoints until the live projector is at most `swapLag` records ahead. */
  const converge = async () => {
    for (let i = 0; i < 50; i++) {
      const live = await liveCheckpoints();
      const at = follower?.positions() ?? new Map<number, bigint>();
      const lag = covered(live) - covered(at);
      if (lag <= (opts.swapLag ?? 1000)) return;
      step(`following the live projector: ${lag} records behind`);
      await advance(live);
    }
  };
  const locked = (mode: 'check' | 'swap') =>
    lockedStep({
      sql,
      schemas,
      model,
      topic,
      mode,
      keys: new Map(shapes.map((s) => [s.table, s.key])),
      lockTimeoutMs: opts.lockTimeoutMs ?? 2000,
      attempts: opts.lockAttempts ?? 5,
      catchUp: (t) => advance(new Map(t)),
      logger: opts.logger,
    });

  try {
    step(`preparing shadow schema ${schemas.shadow}`);
    await createShadow(sql, schemas);
    target = await liveCheckpoints();
    follower = createFollower({
      kafka,
      shadow: shadowSql,
      model,
      currencies: currencyTable(config.money.crypto),
      topic,
      group: config.projector.group,
      low,
      logger: opts.logger,
      onWrite: report,
      ...(opts.stallMs === undefined ? {} : { stallMs: opts.stallMs }),
    });
    await follower.start(target);
    const replayStart = performance.now();
    await advance(target);
    const replayMs = performance.now() - replayStart;
    const replayed = follower.totals().records;
    log.info({ records: replayed, ms: Math.round(replayMs) }, 'replayed up to the live position');

    await converge();
    step('checking the shadow against the live tables');
    const check = await locked('check');
    let before: Comparison;
    try {
      before = await compareTables(
        check.snapshot.sql,
        shapes,
        model,
        schemas.live,
        schemas.shadow,
        opts.maxReported,
      );
    } finally {
      await check.snapshot.close();
    }
    if (!before.identical && !opts.acceptDifferences)
      throw new RebuildError(
        'DIFFERENCES',
        `the rebuilt ${model.name} tables differ from the live ones (${before.tables.map((t) => `${t.table}: ${t.differences}`).join(', ')} rows); nothing was swapped`,
        { comparison: before },
      );
    const result = (over: Partial<RebuildResult>): RebuildResult => {
      const t = follower?.totals() ?? { records: 0, events: 0, skipped: 0 };
      return {
        model: model.name,
        swapped: false,
        ...t,
        replayMs,
        recordsPerSecond: replayMs > 0 ? replayed / (replayMs / 1000) : 0,
        lockedMs: 0,
        lockedRecords: 0,
        totalMs: performance.now() - started,
        checkpoints: Object.fromEntries([...check.checkpoints].map(([p, o]) => [String(p), String(o)])),
        before,
        after: null,
        retiredSchema: null,
        ...over,
      };
    };
    if (opts.swap === false) return result({});
    if (opts.beforeSwap) {
      step('checked: waiting for the swap');
      await opts.beforeSwap();
    }

    await converge();
    step('swapping');
    const swap = await locked('swap');
    keepRetired = true; // until the comparison says the replaced tables are not needed
    log.info({ lockedMs: Math.round(swap.lockedMs), caughtUp: String(swap.caughtUp) }, 'swapped');
    step('comparing row by row as of the swap');
    let after: Comparison;
    try {
      after = await compareTables(
        swap.snapshot.sql,
        shapes,
        model,
        schemas.retired,
        schemas.live,
        opts.maxReported,
      );
    } finally {
      await swap.snapshot.close();
    }
    keepRetired = !after.identical;
    return result({
      swapped: true,
      lockedMs: swap.lockedMs,
      lockedRecords: Number(swap.caughtUp),
      checkpoints: Object.fromEntries([...swap.checkpoints].map(([p, o]) => [String(p), String(o)])),
      after,
      retiredSchema: keepRetired ? schemas.retired : null,
    });
  } finally {
    await follower?.stop().catch((err: unknown) => log.warn({ err }, 'follower stop failed'));
    await shadowSql.end({ timeout: 5 }).catch(() => {});
    await dropSchema(sql, schemas.shadow).catch((err: unknown) =>
      log.warn({ err }, 'could not drop the shadow schema'),
    );
    if (!keepRetired) await dropSchema(sql, schemas.retired).catch(() => {});
    await lock.release();
  }
}
