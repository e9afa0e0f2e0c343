import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE,
  nextRetryDelayMs,
  parseRetryPolicy,
  RetryPolicyError,
  scheduleSpanMs,
} from './schedule.ts';

const H = 3_600_000;

describe('retry schedule', () => {
  it('the published default retries for more than 24 h (Svix-like), then parks', () => {
    expect(DEFAULT_RETRY_SCHEDULE.delaysMs).toEqual([
      5_000,
      300_000,
      1_800_000,
      2 * H,
      5 * H,
      10 * H,
      10 * H,
    ]);
    expect(scheduleSpanMs(DEFAULT_RETRY_SCHEDULE)).toBeGreaterThanOrEqual(24 * H);
    expect(scheduleSpanMs(DEFAULT_RETRY_SCHEDULE)).toBe(5_000 + 300_000 + 1_800_000 + 27 * H);
    // Attempt 1 failed → wait for retry 1; attempt 8 failed → nothing left.
    expect(nextRetryDelayMs(1, DEFAULT_RETRY_SCHEDULE, 0)).toBe(5_000);
    expect(nextRetryDelayMs(7, DEFAULT_RETRY_SCHEDULE, 0)).toBe(10 * H);
    expect(nextRetryDelayMs(8, DEFAULT_RETRY_SCHEDULE, 0)).toBeNull();
  });

  it('jitter shortens a wait by at most its fraction', () => {
    expect(nextRetryDelayMs(2, DEFAULT_RETRY_SCHEDULE, 0.5)).toBe(285_000);
    expect(nextRetryDelayMs(2, DEFAULT_RETRY_SCHEDULE, 0.999999)).toBeGreaterThanOrEqual(270_000);
    expect(nextRetryDelayMs(2, DEFAULT_RETRY_SCHEDULE, 5)).toBeGreaterThanOrEqual(270_000);
    expect(nextRetryDelayMs(2, DEFAULT_RETRY_SCHEDULE, -1)).toBe(300_000);
  });

  it('reads a stored schedule, and the earlier exponential shape as full jitter', () => {
    expect(parseRetryPolicy(null)).toBe(DEFAULT_RETRY_SCHEDULE);
    expect(parseRetryPolicy({ delaysMs: [100, 200] })).toEqual({ delaysMs: [100, 200], jitter: 0.1 });
    const exp = parseRetryPolicy({ retries: 4, minTimeoutMs: 100, maxTimeoutMs: 500, factor: 2 });
    expect(exp).toEqual({ delaysMs: [100, 200, 400, 500], jitter: 1 });
    expect(nextRetryDelayMs(3, exp, 0.5)).toBe(200);
    expect(parseRetryPolicy({}).delaysMs).toHaveLength(10);
  });

  it.each([
    [[], 'must be a JSON object'],
    [{ delaysMs: [1.5] }, 'retry_policy.delaysMs'],
    [{ delaysMs: [-1] }, 'retry_policy.delaysMs'],
    [{ delaysMs: Array(101).fill(1) }, 'retry_policy.delaysMs'],
    [{ delaysMs: [1], jitter: 2 }, 'retry_policy.jitter'],
    [{ delaysMs: [1], retries: 2 }, 'retry_policy.retries is not a known field'],
    [{ retries: 1.5 }, 'retry_policy.retries must be an integer'],
    [{ minTimeoutMs: 10, maxTimeoutMs: 5 }, 'minTimeoutMs must not exceed'],
    [{ extra: 1 }, 'retry_policy.extra is not a known field'],
  ])('refuses %j naming the field', (raw, message) => {
    expect(() => parseRetryPolicy(raw)).toThrow(RetryPolicyError);
    expect(() => parseRetryPolicy(raw)).toThrow(message);
  });

  it('counts attempts from 1', () => {
    expect(() => nextRetryDelayMs(0, DEFAULT_RETRY_SCHEDULE, 0)).toThrow(RangeError);
  });
});
