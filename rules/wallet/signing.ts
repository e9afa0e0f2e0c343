/**
 * Which secrets sign a request to an operator at a given time, during and after a signing-secret
 * rotation (migration 017, lib/db/operator-config.ts `rotateSigningSecret`). Standard Webhooks
 * lets webhook-signature carry several space-delimited signatures and a verifier accept any one
 * that matches, so while the replaced secret is still valid both sign: an operator that has not
 * yet switched keeps verifying with the old one, one that has switched verifies with the new one.
 * Pure: the time is the caller's (wall clock, Unix ms).
 */

/** What of an operator's configuration the secrets come from. */
export interface SigningSecretsOf {
  /** The current secret, `whsec_…`. */
  readonly signingSecret: string;
  /** The secret a rotation replaced, or null/absent. */
  readonly previousSigningSecret?: string | null;
  /** Until when (Unix ms, exclusive) the replaced secret still signs. */
  readonly previousSecretValidUntil?: number | null;
}

/**
 * The secrets to sign with at `nowMs`: the current one first, then the replaced one while
 * `nowMs` is before its end of validity.
 * @returns one or two `whsec_…` secrets, never an empty list.
 */
export function signingSecretsAt(op: SigningSecretsOf, nowMs: number): string[] {
  const prev = op.previousSigningSecret ?? null;
  const until = op.previousSecretValidUntil ?? null;
  if (prev === null || until === null || nowMs >= until || prev === op.signingSecret)
    return [op.signingSecret];
  return [op.signingSecret, prev];
}
