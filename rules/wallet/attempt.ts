/**
 * What one callback attempt's answer does to its callback, pure: the
 * callback's next status and the one fact appended to `wallet-transactions`. The dispatcher
 * appends facts only (CallbackSucceeded, CallbackFailed); what they mean for the bet (reject it,
 * roll it back) is the process manager's decision (process.ts). No I/O, no clock.
 *
 * | callback | ok, duplicate | refused | unknown transaction | mismatch | failed |
 * |---|---|---|---|---|---|
 * | bet | done, succeeded | done, failed(refused) | done, failed(failed) | parked | done, failed(failed) |
 * | win | done, succeeded | parked | parked | parked | retry, then parked |
 * | rollback | done, succeeded | parked | done, succeeded | parked | retry, then parked |
 * | close | done, succeeded | parked | done, succeeded | parked | retry, then parked |
 *
 * A bet is tried once: the player is waiting, and an unknown outcome is resolved by its rollback
 * (the process manager asks for it), never by a payout. Every other callback follows the
 * operator's retry schedule (rules/retry/schedule.ts) and parks when it is used up; a parked
 * callback waits for ops (list, inspect, re-drive).
 */
import { nextRetryDelayMs, type RetrySchedule } from '../retry/schedule.ts';
import type { Answer } from './answers.ts';
import type { CallbackJob } from './bodies.ts';
import type { WalletEvent } from './events.ts';

/** Where a callback stands after an attempt. */
export type CallbackStatus = 'done' | 'due' | 'parked';

export interface AttemptResult {
  readonly status: CallbackStatus;
  /** Unix ms of the next attempt when `due`. */
  readonly nextAttemptAt: number | null;
  /** The fact to append (keyed by the bet's player). */
  readonly event: WalletEvent;
}

function succeeded(job: CallbackJob, answer: Answer, attempts: number, at: number): WalletEvent {
  const ack =
    answer.class === 'ok' || answer.class === 'duplicate'
      ? answer.ack
      : { operatorTxId: '', oldBalance: null, newBalance: null };
  return {
    type: 'CallbackSucceeded',
    value: {
      tx_id: job.txId,
      bet_tx_id: job.betTxId,
      kind: job.kind,
      operator_tx_id: ack.operatorTxId,
      old_balance: ack.oldBalance,
      new_balance: ack.newBalance,
      amount_minor: job.amountMinor,
      answer: answer.class,
      attempts,
      at,
    },
  };
}

/** An answer that is not an acknowledgement. */
export type NotAck = Exclude<Answer, { class: 'ok' | 'duplicate' }>;

/** CallbackFailed of an answer that is not a success; `parked` when ops must act. */
export function failedEvent(
  job: CallbackJob,
  answer: NotAck,
  attempts: number,
  parked: boolean,
  nextAttemptAt: number | null,
  at: number,
): WalletEvent {
  return {
    type: 'CallbackFailed',
    value: {
      tx_id: job.txId,
      bet_tx_id: job.betTxId,
      kind: job.kind,
      attempts,
      error: answer.reason.slice(0, 500),
      answer: answer.class,
      code: answer.code,
      parked,
      next_attempt_at: nextAttemptAt,
      at,
    },
  };
}

/**
 * The result of attempt number `attempts` (1-based) of `job`, answered `answer` at `at` (Unix ms).
 * @param random in [0, 1), for the retry's jitter.
 * @param step the failed attempts the retry schedule counts (1-based; default `attempts`). A
 *   callback pulled forward when its operator was back (docs/decisions/retries/0002-retries-pulled-forward.md) had
 *   one extra attempt that is not a step: `attempts − 1`, so a failure after it waits the step it
 *   was waiting for, and the schedule keeps its full length before parking.
 * @throws RangeError when `step` is not an integer ≥ 1 and the answer is a failure to retry.
 */
export function afterAttempt(
  job: CallbackJob,
  answer: Answer,
  attempts: number,
  schedule: RetrySchedule,
  at: number,
  random: number,
  step: number = attempts,
): AttemptResult {
  if ('ack' in answer)
    return { status: 'done', nextAttemptAt: null, event: succeeded(job, answer, attempts, at) };
  return afterRefusalOrFailure(job, answer, attempts, step, schedule, at, random);
}

function afterRefusalOrFailure(
  job: CallbackJob,
  answer: NotAck,
  attempts: number,
  step: number,
  schedule: RetrySchedule,
  at: number,
  random: number,
): AttemptResult {
  if (job.kind === 'bet') {
    if (answer.class === 'mismatch')
      return {
        status: 'parked',
        nextAttemptAt: null,
        event: failedEvent(job, answer, attempts, true, null, at),
      };
    const a =
      answer.class === 'unknown_transaction'
        ? ({ class: 'failed', code: 'OPERATOR_ERROR', reason: answer.reason } as const)
        : answer;
    return { status: 'done', nextAttemptAt: null, event: failedEvent(job, a, attempts, false, null, at) };
  }
  if (answer.class === 'unknown_transaction' && job.kind !== 'win')
    return { status: 'done', nextAttemptAt: null, event: succeeded(job, answer, attempts, at) };
  if (answer.class === 'failed') {
    const wait = nextRetryDelayMs(step, schedule, random);
    if (wait !== null) {
      const next = at + wait;
      return {
        status: 'due',
        nextAttemptAt: next,
        event: failedEvent(job, answer, attempts, false, next, at),
      };
    }
  }
  return { status: 'parked', nextAttemptAt: null, event: failedEvent(job, answer, attempts, true, null, at) };
}
