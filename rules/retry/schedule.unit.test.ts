import { describe, expect, it } from 'vitest';
import {
  backoffCeilingMs,
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  parseRetryPolicy,
  RetryPolicyError,
  schedule,
} from './schedule.ts';

describe('retry policy', () => {
  it('publishes the default schedule written in the module comment and docs/decisions.md', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ retries: 10, minTimeoutMs: 500, maxTimeoutMs: 60_000, factor: 2 });
    const s = schedule();
    expect(s).toEqual([500, 1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    expect(s.reduce((a, b) => a + b, 0)).toBe(243_500);
  });

  it('grows by factor from minTimeoutMs and caps at maxTimeoutMs', () => {
    const p = parseRetryPolicy({ retries: 5, minTimeoutMs: 100, maxTimeoutMs: 1000, factor: 3 });
    expect(schedule(p)).toEqual([100, 300, 900, 1000, 1000]);
    expect(backoffCeilingMs(1, p)).toBe(100);
  });

  it('full jitter: the wait is uniform in [0, ceiling), whole ms', () => {
    const p = DEFAULT_RETRY_POLICY;
    expect(backoffDelayMs(3, p, 0)).toBe(0);
    expect(backoffDelayMs(3, p, 0.5)).toBe(1000);
    expect(backoffDelayMs(3, p, 0.999999)).toBe(1999);
    expect(backoffDelayMs(3, p, 1)).toBeLessThan(2000);
    expect(backoffDelayMs(3, p, -1)).toBe(0);
  });

  it('fills missing fields with the default', () => {
    expect(parseRetryPolicy({ retries: 2 })).toEqual({ ...DEFAULT_RETRY_POLICY, retries: 2 });
    expect(parseRetryPolicy(null)).toBe(DEFAULT_RETRY_POLICY);
    expect(parseRetryPolicy({})).toEqual(DEFAULT_RETRY_POLICY);
  });

  it.each([
    [[], 'JSON object'],
    ['3', 'JSON object'],
    [{ retries: -1 }, 'retries'],
    [{ retries: 1.5 }, 'integer'],
    [{ retries: 101 }, 'retries'],
    [{ factor: 0.5 }, 'factor'],
    [{ minTimeoutMs: Number.NaN }, 'minTimeoutMs'],
    [{ maxTimeoutMs: '100' }, 'maxTimeoutMs'],
    [{ minTimeoutMs: 2000, maxTimeoutMs: 1000 }, 'must not exceed'],
  ])('refuses %j', (raw, message) => {
    expect(() => parseRetryPolicy(raw)).toThrow(RetryPolicyError);
    expect(() => parseRetryPolicy(raw)).toThrow(message);
  });

  it('refuses a retry number below 1', () => {
    expect(() => backoffCeilingMs(0, DEFAULT_RETRY_POLICY)).toThrow(RangeError);
  });
});
