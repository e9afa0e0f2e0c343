/**
 * Retry schedule of win, rollback and round-close callbacks (docs/architecture.md "Money
 * rules": "a published schedule reaching at least 24 h ... then park for ops"). Pure: no I/O, no
 * clock; randomness comes in as an argument. The durable loop that follows it is the wallet
 * saga's dispatcher (services/wallet-saga/dispatcher.ts): each failed attempt stores the time of
 * the next one in Postgres, so a restart resumes the schedule where it was.
 *
 * Published default, modelled on Svix's webhook schedule (docs.svix.com "Retry schedule":
 * immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): after the first attempt, retries wait
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each shortened by up to 10% at random so the
 * retries of many players failing at once (one operator outage) do not re-synchronise: 8 attempts
 * over about 27 h 35 min, then the callback is parked.
 *
 * An operator's `retry_policy` (jsonb) is either a schedule `{ delaysMs: number[], jitter?: number }`
 * or the earlier exponential shape `{ retries, minTimeoutMs, maxTimeoutMs, factor }`, kept so
 * existing rows and clients still work: retry n then waits a "full jitter" (AWS Architecture
 * Blog, "Exponential Backoff And Jitter", 2015) uniform in [0, min(max, min × factor^(n−1))).
 */

import { RulesError } from '../errors.ts';

/** A resolved schedule: the wait before each retry (ms) and how much of it may be cut at random. */
export interface RetrySchedule {
  /** Ceiling of the wait before retry 1, 2, …, ms; its length is the number of retries. */
  readonly delaysMs: readonly number[];
  /** Fraction 0..1 of each wait that may be cut: the wait is uniform in [d × (1 − jitter), d]. */
  readonly jitter: number;
}

/** The earlier exponential shape (still accepted in operators.retry_policy). */
export interface ExponentialPolicy {
  readonly retries: number;
  readonly minTimeoutMs: number;
  readonly maxTimeoutMs: number;
  readonly factor: number;
}

/** What an operator's retry_policy may hold: a schedule or the exponential shape. */
export type RetryPolicy =
  | { readonly delaysMs: readonly number[]; readonly jitter?: number }
  | ExponentialPolicy;

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** The published default (module comment; docs/decisions/retries/0001-retries-for-a-day.md). */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = Object.freeze({
  delaysMs: Object.freeze([5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H]),
  jitter: 0.1,
});

/** The default as it is stored in an operators row. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  delaysMs: DEFAULT_RETRY_SCHEDULE.delaysMs,
  jitter: DEFAULT_RETRY_SCHEDULE.jitter,
});

/** A retry_policy value that cannot be used. */
export class RetryPolicyError extends RulesError {
  declare readonly code: 'RETRY_POLICY_INVALID';

  constructor(message: string) {
    super('RETRY_POLICY_INVALID', message);
  }
}

/** Longest single wait, ms (2 days), and most retries. */
const MAX_DELAY_MS = 2 * 24 * H;
const MAX_RETRIES = 100;

const LIMITS = {
  retries: [0, MAX_RETRIES],
  minTimeoutMs: [0, MAX_DELAY_MS],
  maxTimeoutMs: [0, MAX_DELAY_MS],
  factor: [1, 10],
} as const;

function exponential(src: Record<string, unknown>): RetrySchedule {
  const out: Record<string, number> = { retries: 10, minTimeoutMs: 500, maxTimeoutMs: 60_000, factor: 2 };
  for (const [field, [min, max]] of Object.entries(LIMITS)) {
    const v = src[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      throw new RetryPolicyError(`retry_policy.${field} must be a number from ${min} to ${max}`);
    if (field === 'retries' && !Number.isInteger(v))
      throw new RetryPolicyError('retry_policy.retries must be an integer');
    out[field] = v;
  }
  const p = out as unknown as ExponentialPolicy;
  if (p.minTimeoutMs > p.maxTimeoutMs)
    throw new RetryPolicyError('retry_policy.minTimeoutMs must not exceed maxTimeoutMs');
  const delaysMs = Array.from({ length: p.retries }, (_, i) =>
    Math.min(p.maxTimeoutMs, p.minTimeoutMs * p.factor ** i),
  );
  return Object.freeze({ delaysMs: Object.freeze(delaysMs), jitter: 1 });
}

/**
 * Reads an operator's retry_policy (jsonb, already parsed) into a schedule. null/undefined → the
 * default. A schedule needs `delaysMs`: 0 to 100 whole ms values, each 0..172800000, and an
 * optional `jitter` 0..1 (default 0.1). The exponential shape's missing fields take the earlier shape's
 * defaults (retries 10, minTimeoutMs 500, maxTimeoutMs 60000, factor 2).
 * @throws RetryPolicyError naming the offending field.
 */
export function parseRetryPolicy(raw: unknown): RetrySchedule {
  if (raw === null || raw === undefined) return DEFAULT_RETRY_SCHEDULE;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new RetryPolicyError('retry_policy must be a JSON object');
  const src = raw as Record<string, unknown>;
  if (src.delaysMs === undefined) {
    for (const k of Object.keys(src))
      if (!(k in LIMITS)) throw new RetryPolicyError(`retry_policy.${k} is not a known field`);
    return exponential(src);
  }
  for (const k of Object.keys(src))
    if (k !== 'delaysMs' && k !== 'jitter')
      throw new RetryPolicyError(`retry_policy.${k} is not a known field of a schedule`);
  const d = src.delaysMs;
  if (
    !Array.isArray(d) ||
    d.length > MAX_RETRIES ||
    !d.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= MAX_DELAY_MS)
  )
    throw new RetryPolicyError(
      `retry_policy.delaysMs must be a list of at most ${MAX_RETRIES} whole ms from 0 to ${MAX_DELAY_MS}`,
    );
  const j = src.jitter ?? DEFAULT_RETRY_SCHEDULE.jitter;
  if (typeof j !== 'number' || !Number.isFinite(j) || j < 0 || j > 1)
    throw new RetryPolicyError('retry_policy.jitter must be a number from 0 to 1');
  return Object.freeze({ delaysMs: Object.freeze([...(d as number[])]), jitter: j });
}

/**
 * The wait before the next attempt after `failedAttempts` failed ones (1-based count), whole ms,
 * or null when the schedule is used up (the callback is then parked).
 * @param random a value in [0, 1), e.g. Math.random().
 * @throws RangeError when `failedAttempts` is not an integer ≥ 1.
 */
export function nextRetryDelayMs(
  failedAttempts: number,
  schedule: RetrySchedule,
  random: number,
): number | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1)
    throw new RangeError(`failedAttempts must be an integer >= 1, got ${failedAttempts}`);
  const d = schedule.delaysMs[failedAttempts - 1];
  if (d === undefined) return null;
  const r = Math.min(Math.max(random, 0), 1 - Number.EPSILON);
  return Math.floor(d * (1 - schedule.jitter * r));
}

/** Total of the schedule's ceilings, ms: the longest a callback can stay in retry before it parks. */
export function scheduleSpanMs(schedule: RetrySchedule): number {
  return schedule.delaysMs.reduce((a, b) => a + b, 0);
}
