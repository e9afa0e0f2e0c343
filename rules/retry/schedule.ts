/**
 * Retry policy of win and rollback callbacks (issue 5: "retried with exponential backoff and
 * jitter (a published schedule, configurable)"). Pure: no I/O, no clock; randomness comes in as
 * an argument. The loop itself is p-retry (services/wallet-saga/executor.ts); this module only
 * says how long to wait before each retry and how many there are.
 *
 * Backoff is "full jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015): the
 * wait before retry n (1-based) is uniform in [0, ceiling(n)) with
 * ceiling(n) = min(maxTimeoutMs, minTimeoutMs × factor^(n−1)). Full jitter spreads the retries of
 * many players failing at once (one operator outage) instead of re-synchronising them.
 *
 * Published default schedule (an operator's `retry_policy` column overrides any field):
 * retries 10, minTimeoutMs 500, maxTimeoutMs 60000, factor 2, so the ceilings of retries 1..10 are
 * 0.5 s, 1 s, 2 s, 4 s, 8 s, 16 s, 32 s, 60 s, 60 s, 60 s: 11 attempts within at most 243.5 s
 * (≈ 122 s on average) of waiting, after which the callback is parked on the dead-letter topic.
 */

/** How a callback is retried; per operator (operators.retry_policy jsonb). */
export interface RetryPolicy {
  /** Retries after the first attempt (attempts = retries + 1), 0..100. */
  readonly retries: number;
  /** Ceiling of the first retry's wait, ms, ≥ 0. */
  readonly minTimeoutMs: number;
  /** Cap of every ceiling, ms, ≥ minTimeoutMs. */
  readonly maxTimeoutMs: number;
  /** Growth of the ceiling per retry, ≥ 1. */
  readonly factor: number;
}

/** The published default (see the module comment and docs/decisions.md "Issue 5"). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  retries: 10,
  minTimeoutMs: 500,
  maxTimeoutMs: 60_000,
  factor: 2,
});

/** A retry_policy value that cannot be used. */
export class RetryPolicyError extends Error {
  readonly code = 'RETRY_POLICY_INVALID';
}

const LIMITS = {
  retries: [0, 100],
  minTimeoutMs: [0, 3_600_000],
  maxTimeoutMs: [0, 3_600_000],
  factor: [1, 10],
} as const;

/**
 * Reads an operator's retry_policy (jsonb, already parsed): missing fields take the default,
 * present fields must be finite numbers in range (retries an integer 0..100, timeouts 0..3600000
 * ms with min ≤ max, factor 1..10).
 * @throws RetryPolicyError naming the offending field.
 */
export function parseRetryPolicy(raw: unknown): RetryPolicy {
  if (raw === null || raw === undefined) return DEFAULT_RETRY_POLICY;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new RetryPolicyError('retry_policy must be a JSON object');
  const src = raw as Record<string, unknown>;
  const out: Record<string, number> = { ...DEFAULT_RETRY_POLICY };
  for (const [field, [min, max]] of Object.entries(LIMITS)) {
    const v = src[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      throw new RetryPolicyError(`retry_policy.${field} must be a number from ${min} to ${max}`);
    if (field === 'retries' && !Number.isInteger(v))
      throw new RetryPolicyError('retry_policy.retries must be an integer');
    out[field] = v;
  }
  if ((out.minTimeoutMs as number) > (out.maxTimeoutMs as number))
    throw new RetryPolicyError('retry_policy.minTimeoutMs must not exceed maxTimeoutMs');
  return Object.freeze(out as unknown as RetryPolicy);
}

/**
 * Upper bound of the wait before retry `retry` (1-based), ms.
 * @throws RangeError when `retry` is not an integer ≥ 1.
 */
export function backoffCeilingMs(retry: number, policy: RetryPolicy): number {
  if (!Number.isInteger(retry) || retry < 1)
    throw new RangeError(`retry must be an integer >= 1, got ${retry}`);
  return Math.min(policy.maxTimeoutMs, policy.minTimeoutMs * policy.factor ** (retry - 1));
}

/**
 * The full-jitter wait before retry `retry` (1-based), whole ms in [0, ceiling).
 * @param random a value in [0, 1), e.g. Math.random().
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: number): number {
  const r = Math.min(Math.max(random, 0), 1 - Number.EPSILON);
  return Math.floor(r * backoffCeilingMs(retry, policy));
}

/** The ceilings of every retry of `policy`, ms, in order (the published schedule). */
export function schedule(policy: RetryPolicy = DEFAULT_RETRY_POLICY): number[] {
  return Array.from({ length: policy.retries }, (_, i) => backoffCeilingMs(i + 1, policy));
}
