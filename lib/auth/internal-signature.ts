/**
 * Signatures of internal calls between services that share the token secret (AUTH_TOKEN_SECRET):
 * the API asking the round engine to decide a cash-out. The key is derived from the token secret
 * for this one purpose (HMAC-SHA256(secret, "internal:" + purpose)), so a signature made here can
 * never be replayed as a token, and the body is signed whole: `x-internal-signature: <64 hex>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature. */
export const INTERNAL_SIGNATURE_HEADER = 'x-internal-signature';

const keyOf = (secret: Buffer, purpose: string) =>
  createHmac('sha256', secret).update(`internal:${purpose}`).digest();

/** The signature of `body` (the exact request bytes) for `purpose`, 64 lower-case hex. */
export function signInternal(secret: Buffer, purpose: string, body: string): string {
  return createHmac('sha256', keyOf(secret, purpose)).update(body).digest('hex');
}

/** True when `signature` is the signature of `body` for `purpose` (constant-time comparison). */
export function verifyInternal(
  secret: Buffer,
  purpose: string,
  body: string,
  signature: string | undefined,
): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(
    Buffer.from(signInternal(secret, purpose, body), 'hex'),
    Buffer.from(signature, 'hex'),
  );
}
