/**
 * Pulling an operator's waiting retries forward when it is back
 * (docs/decisions/retries/0002-retries-pulled-forward.md): recovery.ts says when a path answers
 * again, the prober when a breaker closes; this runs the one statement that makes the operator's
 * wins, rollbacks and round closes waiting for a later retry due now (store.ts `pullForward`), then
 * wakes the loop, which leases and sends them like any due callback. One pull per operator at a
 * time: a recovery seen while a pull runs makes one more pass after it (rows it already moved are
 * not moved again), never a second statement at once. Failures are logged, never thrown.
 */
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import type { SagaMetrics } from './metrics.ts';
import { pullForward as pullForwardRows } from './store.ts';

export interface PullForwardDeps {
  readonly sql: Sql;
  /** Unix ms. */
  readonly now: () => number;
  /** Off (WALLET_SAGA_PULL_FORWARD=false): `pull` does nothing. */
  readonly enabled: boolean;
  /** Whether the dispatcher is stopping: no pull starts, and no further pass. */
  readonly stopped: () => boolean;
  /** Called after a pass that made callbacks due (wakes the loop). */
  readonly pulled: () => void;
  readonly metrics: SagaMetrics;
  readonly log: Logger;
}

export class PullForward {
  private readonly pulling = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(private readonly deps: PullForwardDeps) {}

  /** The operator is back: its waiting retries are made due now. Not awaited; failures are logged. */
  pull(operatorId: string): void {
    const { enabled, stopped, log } = this.deps;
    if (!enabled || stopped()) return;
    if (this.pulling.has(operatorId)) {
      this.again.add(operatorId);
      return;
    }
    const p = this.run(operatorId)
      .catch((err) =>
        log.warn({ err: (err as Error).message, operator: operatorId }, 'pulling retries forward failed'),
      )
      .finally(() => this.pulling.delete(operatorId));
    this.pulling.set(operatorId, p);
  }

  /** Resolves when the pulls in progress have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pulling.values()]);
  }

  /** Passes until no recovery came in during the last one. @throws the postgres.js error. */
  private async run(operatorId: string): Promise<void> {
    const { sql, now, metrics, log } = this.deps;
    do {
      this.again.delete(operatorId);
      const txIds = await pullForwardRows(sql, operatorId, now());
      if (txIds.length > 0) {
        metrics.pulledForward.inc({ operator: operatorId }, txIds.length);
        log.info(
          { operator: operatorId, callbacks: txIds.length },
          'operator answers again; its waiting retries are due now',
        );
        this.deps.pulled();
      }
    } while (this.again.has(operatorId) && !this.deps.stopped());
  }
}
