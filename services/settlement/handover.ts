/**
 * What a settlement instance does when the wallet partitions it settles change (docs/decisions/money/0005-settlement-scale-out.md): claim the partitions of the new assignment, append what
 * their previous owner committed but did not append (recovery.ts), and settle their open bets whose
 * round is already stored: a round read while the partition was moving, by an instance that did
 * not own the partition then, settles nothing of it, so the new owner looks for such bets itself.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import { retryStale, sweepPartitions } from './batch.ts';
import { claimPartitions, type Ownership, type Sendable, sendFenced } from './ownership.ts';
import { recoverOutbox } from './recovery.ts';

export interface HandoverDeps {
  readonly kafka: Kafka;
  readonly producer: Producer;
  readonly walletTopic: string;
  readonly log: Logger;
  readonly ownership: Ownership;
  /** Clock for the `at` of appended events (Unix ms). */
  readonly now: () => number;
  /** Told of every event appended (metrics). */
  readonly onAppended: (sent: readonly Sendable[]) => void;
}

export interface Handover {
  /**
   * The wallet group gave this instance `partitions` (all it has now, possibly none): forgets the
   * others, claims these, recovers their outbox and sweeps their open bets.
   * @throws database or broker errors; calling again is safe (each claim is a new epoch).
   */
  assigned(sql: Sql, partitions: readonly number[]): Promise<void>;
  /** Claims `partitions` again (after another instance claimed them), recovers and sweeps them. @throws as assigned. */
  claim(sql: Sql, partitions: readonly number[]): Promise<void>;
  /** Sweeps every partition this instance holds (after the rounds reader skipped ahead). @throws as assigned. */
  sweepOwned(sql: Sql): Promise<void>;
  /** Appends `items` through the fence and counts them. @throws database or broker errors. */
  send(sql: Sql, items: readonly Sendable[]): Promise<void>;
}

/** Builds the handover steps of one instance. */
export function createHandover(deps: HandoverDeps): Handover {
  const { kafka, producer, walletTopic, log, ownership } = deps;

  async function send(sql: Sql, items: readonly Sendable[]): Promise<void> {
    if (items.length === 0) return;
    const { sent, skipped } = await sendFenced(sql, producer, walletTopic, items);
    deps.onAppended(sent);
    if (skipped > 0)
      log.info({ skipped }, 'partitions claimed by another instance: its recovery appends those');
  }

  async function sweep(sql: Sql, partitions: readonly number[]): Promise<void> {
    const decided = await retryStale(
      ownership,
      () => {
        const epochs = new Map(ownership.epochs());
        return sweepPartitions(
          sql,
          partitions.filter((p) => epochs.has(p)),
          epochs,
          deps.now(),
        );
      },
      async (stale) => ownership.release(stale),
    );
    if (decided.length > 0)
      log.info({ partitions, events: decided.length }, 'settled bets left open by a handover');
    await send(sql, decided);
  }

  async function claim(sql: Sql, partitions: readonly number[]): Promise<void> {
    if (partitions.length === 0) return;
    // One step: nothing is decided here at the new epochs before the recovery has appended the rest.
    await ownership.serial(async () => {
      const epochs = await claimPartitions(sql, ownership.owner, partitions);
      await recoverOutbox({ sql, kafka, producer, walletTopic, log, claimed: epochs });
      ownership.claimed(epochs);
      log.info(
        { epochs: Object.fromEntries([...epochs].map(([p, e]) => [p, String(e)])) },
        'wallet partitions claimed',
      );
    });
    await sweep(sql, partitions);
  }

  return {
    async assigned(sql, partitions) {
      const keep = new Set(partitions);
      ownership.drop([...ownership.epochs().keys()].filter((p) => !keep.has(p)));
      await claim(sql, partitions);
    },
    claim,
    sweepOwned: (sql) => sweep(sql, [...ownership.epochs().keys()]),
    send,
  };
}
