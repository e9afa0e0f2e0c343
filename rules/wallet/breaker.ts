/**
 * The circuit breaker of one operator, pure: after `failures` consecutive failed
 * bet callbacks (answers of class `failed`: timeouts, 5xx, malformed answers; a refusal is an
 * answer and counts as success), or a failed balance probe, the breaker opens and the API refuses
 * new bets of the operator's players at once (503 OPERATOR_UNAVAILABLE with Retry-After) instead
 * of accepting them and rolling each one back. At `retryAt` the saga sends a half-open balance
 * probe: success closes the breaker, failure keeps it open for another cooldown, doubled each
 * time up to `maxCooldownMs`. The pattern is Nygard's "Circuit Breaker" (Release It!, 2007). No
 * I/O, no clock.
 */

export interface BreakerConfig {
  /** Consecutive failed bet callbacks that open the breaker (≥ 1). */
  readonly failures: number;
  /** First wait before the half-open probe, ms. */
  readonly cooldownMs: number;
  /** Longest wait between probes, ms. */
  readonly maxCooldownMs: number;
}

export interface BreakerState {
  readonly state: 'closed' | 'open';
  /** Consecutive failures (closed), or failed probes since it opened (open). */
  readonly failures: number;
  /** Unix ms it opened; null when closed. */
  readonly openedAt: number | null;
  /** Unix ms of the next half-open probe; null when closed. */
  readonly retryAt: number | null;
  readonly lastError: string | null;
}

export const CLOSED: BreakerState = Object.freeze({
  state: 'closed',
  failures: 0,
  openedAt: null,
  retryAt: null,
  lastError: null,
});

/** The state after a bet callback answered `ok` (any answer but a failure) or `failed` at `at`. */
export function afterBetAnswer(
  s: BreakerState,
  outcome: 'ok' | 'failed',
  error: string | null,
  at: number,
  cfg: BreakerConfig,
): BreakerState {
  if (s.state === 'open') return s; // only the probe closes it
  if (outcome === 'ok') return s.failures === 0 ? s : CLOSED;
  const failures = s.failures + 1;
  if (failures < cfg.failures) return { ...s, failures, lastError: error };
  return { state: 'open', failures: 0, openedAt: at, retryAt: at + cfg.cooldownMs, lastError: error };
}

/** The state after a balance probe answered (`ok`) or not at `at`. */
export function afterProbe(
  s: BreakerState,
  ok: boolean,
  error: string | null,
  at: number,
  cfg: BreakerConfig,
): BreakerState {
  if (ok) return CLOSED;
  const failures = s.state === 'open' ? s.failures + 1 : 0;
  const wait = Math.min(cfg.maxCooldownMs, cfg.cooldownMs * 2 ** failures);
  return { state: 'open', failures, openedAt: s.openedAt ?? at, retryAt: at + wait, lastError: error };
}

/**
 * Whether new bets are refused at `at`, and the Retry-After to give (whole seconds, ≥ 1): the time
 * to the next probe, or 1 s when the probe is due or running.
 */
export function refusesBets(
  s: BreakerState,
  at: number,
): { refused: false } | { refused: true; retryAfterS: number } {
  if (s.state === 'closed') return { refused: false };
  return { refused: true, retryAfterS: Math.max(1, Math.ceil(((s.retryAt ?? at) - at) / 1000)) };
}

/** True when a half-open probe is due at `at`. */
export function probeDue(s: BreakerState, at: number): boolean {
  return s.state === 'open' && (s.retryAt ?? 0) <= at;
}
