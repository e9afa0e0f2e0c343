/**
 * Reads a read model's topic from the first retained offset into its shadow tables, up to target
 * offsets that the caller raises step by step (the live projector's checkpoints), and never past
 * them: a partition that reaches its target is paused, and the records of a batch at or beyond it
 * are left unresolved, so kafkajs fetches them again once the target moves. Each range is written
 * by the model's own store with the shadow checkpoint in the same statement, so the shadow's
 * checkpoint is exactly the offset its rows cover.
 *
 * The consumer group is throw-away (`<PROJECTOR_GROUP>-rebuild-<model>-<uuid>`) and commits
 * nothing: Postgres (the shadow checkpoint) holds the position, as for the live projectors.
 */
import { randomUUID } from 'node:crypto';
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { Sql } from '../db/pool.ts';
import type { Logger } from '../logger.ts';
import { RebuildError } from './errors.ts';
import type { ReadModel } from './models.ts';

/** What has been written into the shadow so far. */
export interface FollowerTotals {
  /** Offsets covered (records read, skipped ones included), over all partitions. */
  readonly records: number;
  readonly events: number;
  readonly skipped: number;
}

export interface Follower {
  /** Joins and starts reading towards `targets`. */
  start(targets: ReadonlyMap<number, bigint>): Promise<void>;
  /**
   * Raises the targets and resolves once every partition's shadow checkpoint has reached its target.
   * @throws RebuildError REBUILD_STALLED when no partition moves for `stallMs`; the write error when a write fails.
   */
  advanceTo(targets: ReadonlyMap<number, bigint>): Promise<void>;
  /** Shadow checkpoint (next offset) per partition; partitions never written are absent. */
  positions(): ReadonlyMap<number, bigint>;
  totals(): FollowerTotals;
  stop(): Promise<void>;
}

export interface FollowerDeps {
  readonly kafka: Kafka;
  /** Pool whose search_path is the shadow schema. */
  readonly shadow: Sql;
  readonly model: ReadModel;
  /** The projector's currency table (read models that format amounts use it). */
  readonly currencies: Currencies;
  readonly topic: string;
  readonly group: string;
  /** First retained offset per partition (where reading starts). */
  readonly low: ReadonlyMap<number, bigint>;
  readonly logger: Logger;
  /** Called after each write, with the records it covered. */
  readonly onWrite?: (records: number) => void;
  /** No progress for this long (ms) while behind a target fails the rebuild (60000). */
  readonly stallMs?: number;
}

/** Builds the follower; nothing connects until `start()`. */
export function createFollower(deps: FollowerDeps): Follower {
  const { model, topic } = deps;
  const stallMs = deps.stallMs ?? 60_000;
  const log = deps.logger.child({ component: 'rebuild-follower', model: model.name });
  const consumer = deps.kafka.consumer({
    groupId: `${deps.group}-rebuild-${model.name}-${randomUUID()}`,
    maxWaitTimeInMs: 200,
    sessionTimeout: 30_000,
    heartbeatInterval: 1000,
  });
  const position = new Map<number, bigint>();
  const targets = new Map<number, bigint>();
  let totals = { records: 0, events: 0, skipped: 0 };
  let failure: unknown;
  let wake: () => void = () => {};
  let stopped = false;

  const at = (p: number) => position.get(p) ?? deps.low.get(p) ?? 0n;
  const behind = () => [...targets].filter(([p, t]) => at(p) < t).map(([p]) => p);
  const pause = (p: number) => consumer.pause([{ topic, partitions: [p] }]);

  async function eachBatch({ batch, resolveOffset, heartbeat, isStale }: EachBatchPayload): Promise<void> {
    const p = batch.partition;
    const from = at(p);
    const target = targets.get(p) ?? from;
    if (from >= target) return pause(p); // unresolved: fetched again after the target moves
    if (isStale() || stopped || failure) return;
    const messages = batch.messages.filter((m) => {
      const o = BigInt(m.offset);
      return o >= from && o < target;
    });
    const lastPlusOne = BigInt(batch.lastOffset()) + 1n;
    // A batch that reaches past the target covers every offset below it: no record there was skipped.
    const next = lastPlusOne < target ? lastPlusOne : target;
    if (next <= from) return;
    try {
      const r = await model.apply(
        deps.shadow,
        { projection: model.projection, topic, partition: p },
        messages,
        next,
        deps.currencies,
      );
      totals = {
        records: totals.records + Number(next - from),
        events: totals.events + r.events,
        skipped: totals.skipped + r.skipped,
      };
    } catch (err) {
      failure = err;
      wake();
      throw err;
    }
    position.set(p, next);
    resolveOffset(String(next - 1n));
    deps.onWrite?.(Number(next - from));
    if (next >= target) pause(p);
    wake();
    await heartbeat();
  }

  async function waitCaughtUp(): Promise<void> {
    let last = totals.records;
    let lastMove = Date.now();
    while (behind().length > 0) {
      if (failure) throw failure;
      if (stopped) throw new Error('rebuild follower stopped');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (totals.records !== last) {
        last = totals.records;
        lastMove = Date.now();
      } else if (Date.now() - lastMove > stallMs) {
        const stuck = behind().map((p) => `${p}@${at(p)}<${targets.get(p)}`);
        throw new RebuildError(
          'REBUILD_STALLED',
          `the replay of ${topic} stopped moving for ${stallMs} ms (partition@position<target: ${stuck.join(', ')})`,
        );
      }
    }
    if (failure) throw failure;
  }

  function setTargets(next: ReadonlyMap<number, bigint>): void {
    for (const [p, t] of next) {
      if ((targets.get(p) ?? 0n) > t) continue; // targets only move forward
      targets.set(p, t);
    }
    const resume = behind();
    if (resume.length > 0) consumer.resume([{ topic, partitions: resume }]);
  }

  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    // Every (re)join starts from the shadow checkpoint: nothing is committed to Kafka.
    for (const p of e.payload.memberAssignment[topic] ?? []) {
      consumer.seek({ topic, partition: p, offset: String(at(p)) });
    }
  });
  consumer.on(consumer.events.CRASH, (e) => {
    if (!e.payload.restart) {
      failure ??= e.payload.error;
      wake();
    }
  });

  return {
    async start(initial) {
      for (const [p, t] of initial) targets.set(p, t);
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
      log.debug({ targets: Object.fromEntries(targets) }, 'rebuild follower started');
    },
    async advanceTo(next) {
      setTargets(next);
      await waitCaughtUp();
    },
    positions: () => new Map(position),
    totals: () => totals,
    async stop() {
      stopped = true;
      wake();
      await consumer.disconnect();
    },
  };
}
