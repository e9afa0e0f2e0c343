/**
 * Test keys for the edge's credential tests (not a test file): a KeyCreated event with a fresh id
 * and secret, and the credentials derived from it (the key itself, a token).
 */
import { newKeyId, newSecret, secretHash } from '../../lib/auth/credentials.ts';
import type { KeyCreated } from '../../lib/auth/key-events.ts';
import { issueToken } from '../../lib/auth/tokens.ts';

export interface TestKey {
  readonly keyId: string;
  readonly secret: string;
  readonly event: KeyCreated;
  /** A fresh `tok_` for this key, valid 15 s from `nowMs`. */
  token(tokenSecret: Buffer, nowMs?: number): string;
}

/** A key with `scopes` (default `stream:*`); `origins` makes it a public key, `boundDomain` a browser key. */
export function testKey(
  opts: {
    scopes?: string[];
    origins?: string[];
    rateLimit?: number;
    name?: string;
    boundDomain?: string;
  } = {},
): TestKey {
  const kind = opts.origins ? 'public' : 'private';
  const keyId = newKeyId();
  const secret = newSecret(kind);
  const event: KeyCreated = {
    key_id: keyId,
    name: opts.name ?? `test ${keyId}`,
    kind,
    secret_sha256: secretHash(secret),
    scopes: opts.scopes ?? ['stream:*'],
    rate_limit: opts.rateLimit ?? 1000,
    allowed_origins: opts.origins ?? [],
    admin: false,
    visitor_id: opts.boundDomain ? 'visitor-1' : null,
    bound_domain: opts.boundDomain ?? null,
    created_at: Date.now(),
  };
  return {
    keyId,
    secret,
    event,
    token: (tokenSecret, nowMs = Date.now()) => issueToken(tokenSecret, keyId, nowMs).token,
  };
}
