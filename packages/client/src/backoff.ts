/**
 * Reconnection delays: exponential backoff with jitter ("equal jitter": half fixed, half random),
 * so that clients of an edge that went away do not all come back in the same instant.
 */

export interface BackoffOptions {
  /** First delay, ms (default 500). */
  readonly initialMs?: number;
  /** Largest delay, ms (default 15000). */
  readonly maxMs?: number;
}

/**
 * The delay before reconnection attempt `attempt` (1 for the first), ms: half of
 * min(max, initial·2^(attempt-1)) plus a random part up to the other half.
 */
export function backoffDelay(
  attempt: number,
  o: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const base = Math.min(o.maxMs ?? 15_000, (o.initialMs ?? 500) * 2 ** Math.max(0, attempt - 1));
  return base / 2 + random() * (base / 2);
}
