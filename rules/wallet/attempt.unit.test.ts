/** What an attempt's answer does to its callback (rules/wallet/attempt.ts's table), row by row. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from '../retry/schedule.ts';
import type { Answer } from './answers.ts';
import { afterAttempt } from './attempt.ts';
import type { CallbackJob } from './bodies.ts';
import type { BetContext } from './events.ts';

const bet = { operator_id: 'op1', user_id: 'u1', amount_minor: 1000 } as BetContext;
const job = (kind: CallbackJob['kind']): CallbackJob => ({
  kind,
  txId: 41,
  betTxId: 40,
  amountMinor: 500,
  bet,
});
const ack = { operatorTxId: 'o', oldBalance: '1.00', newBalance: '6.00' };
const answers: Record<string, Answer> = {
  ok: { class: 'ok', ack },
  duplicate: { class: 'duplicate', ack: { operatorTxId: '', oldBalance: null, newBalance: null } },
  refused: { class: 'refused', code: 'INSUFFICIENT_FUNDS', reason: 'r' },
  unknown_transaction: { class: 'unknown_transaction', code: 'BET_NOT_FOUND', reason: 'r' },
  mismatch: { class: 'mismatch', code: 'IDEMPOTENCY_CONFLICT', reason: 'r' },
  failed: { class: 'failed', code: 'TIMEOUT', reason: 'r' },
};
const T = 1_000_000;

describe('afterAttempt', () => {
  it.each([
    ['bet', 'ok', 'done', 'CallbackSucceeded'],
    ['bet', 'duplicate', 'done', 'CallbackSucceeded'],
    ['bet', 'refused', 'done', 'CallbackFailed'],
    ['bet', 'unknown_transaction', 'done', 'CallbackFailed'],
    ['bet', 'mismatch', 'parked', 'CallbackFailed'],
    ['bet', 'failed', 'done', 'CallbackFailed'],
    ['win', 'ok', 'done', 'CallbackSucceeded'],
    ['win', 'duplicate', 'done', 'CallbackSucceeded'],
    ['win', 'refused', 'parked', 'CallbackFailed'],
    ['win', 'unknown_transaction', 'parked', 'CallbackFailed'],
    ['win', 'mismatch', 'parked', 'CallbackFailed'],
    ['win', 'failed', 'due', 'CallbackFailed'],
    ['rollback', 'ok', 'done', 'CallbackSucceeded'],
    ['rollback', 'unknown_transaction', 'done', 'CallbackSucceeded'],
    ['rollback', 'refused', 'parked', 'CallbackFailed'],
    ['rollback', 'failed', 'due', 'CallbackFailed'],
    ['close', 'unknown_transaction', 'done', 'CallbackSucceeded'],
    ['close', 'failed', 'due', 'CallbackFailed'],
  ] as const)('%s answered %s → %s, %s', (kind, answer, status, event) => {
    const r = afterAttempt(job(kind), answers[answer] as Answer, 1, DEFAULT_RETRY_SCHEDULE, T, 0);
    expect(r.status).toBe(status);
    expect(r.event.type).toBe(event);
    expect(r.event.value).toMatchObject({ tx_id: 41, bet_tx_id: 40, kind });
    if (r.event.type === 'CallbackSucceeded') expect(r.event.value.answer).toBe(answer);
    if (r.event.type === 'CallbackFailed') expect(r.event.value.parked).toBe(status === 'parked');
  });

  it('a bet answered "unknown transaction" counts as a failure (rolled back), not a refusal', () => {
    const r = afterAttempt(
      job('bet'),
      answers.unknown_transaction as Answer,
      1,
      DEFAULT_RETRY_SCHEDULE,
      T,
      0,
    );
    expect(r.event.value).toMatchObject({ answer: 'failed', code: 'OPERATOR_ERROR' });
  });

  it('a failing win follows the schedule, then parks; each failure names the next attempt', () => {
    const s: RetrySchedule = { delaysMs: [1_000, 60_000], jitter: 0 };
    const f = answers.failed as Answer;
    expect(afterAttempt(job('win'), f, 1, s, T, 0)).toMatchObject({
      status: 'due',
      nextAttemptAt: T + 1_000,
      event: { value: { next_attempt_at: T + 1_000, parked: false, attempts: 1 } },
    });
    expect(afterAttempt(job('win'), f, 2, s, T, 0)).toMatchObject({
      status: 'due',
      nextAttemptAt: T + 60_000,
    });
    expect(afterAttempt(job('win'), f, 3, s, T, 0)).toMatchObject({
      status: 'parked',
      nextAttemptAt: null,
      event: { value: { parked: true, attempts: 3, code: 'TIMEOUT' } },
    });
  });

  it('a pulled-forward win that fails again waits the step it was waiting for, and parks one attempt later', () => {
    const s: RetrySchedule = { delaysMs: [1_000, 60_000], jitter: 0 };
    const f = answers.failed as Answer;
    // Two failures (waiting the 60 s step), pulled forward: attempt 3 fails, step 2 again.
    expect(afterAttempt(job('win'), f, 3, s, T, 0, 2)).toMatchObject({
      status: 'due',
      nextAttemptAt: T + 60_000,
      event: { value: { attempts: 3, next_attempt_at: T + 60_000, parked: false } },
    });
    expect(afterAttempt(job('win'), f, 4, s, T, 0, 3)).toMatchObject({
      status: 'parked',
      event: { value: { attempts: 4, parked: true } },
    });
    // An acknowledgement carries the real attempt count whatever the step.
    expect(afterAttempt(job('win'), answers.ok as Answer, 3, s, T, 0, 2).event.value).toMatchObject({
      attempts: 3,
    });
  });
});
