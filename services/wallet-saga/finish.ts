/**
 * The batched finish: storing attempts' results and appending their facts. Every result that comes
 * in while a batch is being stored goes in the next batch: one statement per batch (store.ts
 * `finishAttempts`, each result fenced by its holder AND the attempt number it was leased with, so
 * a result whose lease was taken over is dropped with its fact), then the batch's facts are
 * appended together (outbox.ts), and the loop is woken once per stored batch (a stored debit may
 * release its player's next debit and its bet's win), not once per answer.
 */
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import type { SagaMetrics } from './metrics.ts';
import type { Outbox } from './outbox.ts';
import { type AttemptRecord, finishAttempts, type LeasedCallback } from './store.ts';

/** Most attempts' results stored by one statement. */
const FINISH_BATCH = 256;

export interface FinisherDeps {
  readonly sql: Sql;
  /** This instance's name in leases. */
  readonly owner: string;
  /** Unix ms. */
  readonly now: () => number;
  readonly outbox: Outbox;
  /** Called after each stored batch (wakes the loop). */
  readonly stored: () => void;
  readonly metrics: SagaMetrics;
  readonly log: Logger;
}

interface Finishing {
  readonly c: LeasedCallback;
  readonly record: AttemptRecord;
  readonly stored: () => void;
  readonly failed: (err: unknown) => void;
}

export class Finisher {
  private readonly queue: Finishing[] = [];
  private finishing = false;

  constructor(private readonly deps: FinisherDeps) {}

  /**
   * Stores `c`'s result (fenced by its lease) and appends its fact, batched with others.
   * Resolves when its batch's facts are appended (also when its lease was lost: then nothing of it
   * was stored, and the new holder decides).
   * @throws (rejects with) the store's or the append's error; a stored result's fact is then
   *   appended by the outbox relay.
   */
  finish(c: LeasedCallback, record: AttemptRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ c, record, stored: resolve, failed: reject });
      if (!this.finishing) void this.drain();
    });
  }

  /** Stores batches until the queue is empty. */
  private async drain(): Promise<void> {
    this.finishing = true;
    try {
      while (this.queue.length > 0) await this.storeBatch(this.queue.splice(0, FINISH_BATCH));
    } finally {
      this.finishing = false;
    }
  }

  /** One statement for `batch`, then its facts appended together; never throws. */
  private async storeBatch(batch: Finishing[]): Promise<void> {
    const { sql, owner, now, metrics, log } = this.deps;
    try {
      const r = await finishAttempts(
        sql,
        owner,
        batch.map((f) => ({ txId: f.c.txId, attempts: f.c.attempts, record: f.record })),
        now(),
      );
      metrics.finishBatch.observe(batch.length);
      for (const f of batch) {
        if (r.held.has(f.c.txId)) continue;
        log.warn({ txId: f.c.txId }, 'lease lost before the result was stored; the new holder decides');
      }
      // The batch's events go to the log together; each attempt ends when they are appended.
      const appended = this.deps.outbox.flush(r.outboxIds);
      appended.catch(() => {});
      for (const f of batch) appended.then(f.stored, f.failed);
      this.deps.stored();
    } catch (err) {
      for (const f of batch) f.failed(err);
    }
  }
}
