/**
 * The bet answers fed to each operator's circuit breaker (rules/wallet/breaker.ts,
 * lib/db/operator-breakers.ts), in the order the bets were sent (send-order.ts): "N consecutive
 * failed bet callbacks" means consecutive in send order. One chain of updates per operator, so
 * two updates of one breaker never race. A success is written whenever a failure may be counted
 * (this instance's view, corrected by the stored state after each update), a failure always. The
 * updates are not awaited by the attempt; their failures are logged.
 */
import { type ProbeTarget, updateBreaker } from '../../lib/db/operator-breakers.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Answer } from '../../rules/wallet/answers.ts';
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import { afterBetAnswer, type BreakerConfig } from '../../rules/wallet/breaker.ts';
import type { SagaMetrics } from './metrics.ts';
import { SendOrder } from './send-order.ts';

/** A bet callback's classified answer. */
export interface BetAnswer {
  readonly job: CallbackJob;
  readonly answer: Answer;
}

export interface BreakerAnswersDeps {
  readonly sql: Sql;
  /** Unix ms. */
  readonly now: () => number;
  readonly breaker: BreakerConfig;
  readonly metrics: SagaMetrics;
  readonly log: Logger;
}

export class BreakerAnswers {
  private readonly chain = new Map<string, Promise<void>>();
  private readonly mayCount = new Map<string, boolean>();
  private readonly pending = new Map<string, number>();
  private readonly order = new SendOrder<BetAnswer>((_op, a) => this.record(a.job, a.answer));

  constructor(private readonly deps: BreakerAnswersDeps) {}

  /** A bet of `operatorId` is about to be sent: its sequence number for `answered`. */
  sent(operatorId: string): number {
    return this.order.sent(operatorId);
  }

  /**
   * The bet `seq` of `operatorId` ended: with its answer, or `null` when it got none (the send
   * threw). Releases to the breaker every answer now in send order.
   */
  answered(operatorId: string, seq: number, outcome: BetAnswer | null): void {
    this.order.answered(operatorId, seq, outcome);
  }

  /** Records one bet answer in the operator's breaker, after the updates queued before it. */
  private record(job: CallbackJob, answer: Answer): void {
    const { mayCount, pending } = this;
    const op = job.bet.operator_id;
    const failed = answer.class === 'failed';
    if (!failed && !mayCount.get(op)) return;
    mayCount.set(op, failed);
    pending.set(op, (pending.get(op) ?? 0) + 1);
    const probe: ProbeTarget = {
      user_id: job.bet.user_id,
      currency: job.bet.currency,
      session_id: job.bet.session_id,
    };
    const reason = failed ? answer.reason : null;
    const next = (this.chain.get(op) ?? Promise.resolve())
      .then(() => this.update(op, failed, reason, probe))
      .catch((err) =>
        this.deps.log.warn({ err: (err as Error).message, operator: op }, 'breaker update failed'),
      )
      .finally(() => pending.set(op, (pending.get(op) ?? 1) - 1));
    this.chain.set(op, next);
  }

  /** One update of `op`'s stored breaker. @throws the postgres.js error. */
  private async update(
    op: string,
    failed: boolean,
    reason: string | null,
    probe: ProbeTarget,
  ): Promise<void> {
    const { sql, now, breaker, metrics, log } = this.deps;
    const { before, after } = await updateBreaker(
      sql,
      op,
      (s) => afterBetAnswer(s, failed ? 'failed' : 'ok', reason, now(), breaker),
      now(),
      failed ? probe : undefined,
    );
    // Other instances count too: the stored state decides, unless a later answer is queued.
    if (this.pending.get(op) === 1) this.mayCount.set(op, after.state === 'open' || after.failures > 0);
    if (before.state !== after.state) {
      metrics.breakerOpen.set({ operator: op }, after.state === 'open' ? 1 : 0);
      log.warn(
        { operator: op, state: after.state, error: after.lastError },
        'operator circuit breaker changed',
      );
    }
  }
}
