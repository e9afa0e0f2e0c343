/**
 * Credential checks shared by every protocol (docs/contract.md "Authentication", docs/architecture.md 401/403 bodies).
 * `authenticate` parses a key or token, looks the key up in the in-memory table (no database),
 * applies revocation, the public-key origin rule (tokens inherit it) and, when asked, a scope.
 * Pure apart from the table lookup: the time comes in as `now` (Unix ms).
 */
import { parseCredential, secretHash } from './credentials.ts';
import type { KeyLookup, KeyRecord } from './key-table.ts';
import { originAllowed, originOnHost } from './origins.ts';
import { hasScope, type Scope } from './scopes.ts';
import { verifyToken } from './tokens.ts';

/** Who made the request. */
export interface Principal {
  readonly keyId: string;
  readonly kind: 'private' | 'public';
  readonly scopes: readonly string[];
  readonly rateLimit: number;
  readonly allowedOrigins: readonly string[];
  readonly name: string;
  /** Whether the credential was a `tok_` token (rather than the key itself). */
  readonly viaToken: boolean;
}

export type AuthFailureReason =
  | 'missing'
  | 'malformed'
  | 'unknown'
  | 'expired'
  | 'revoked'
  | 'origin'
  | 'scope';

export type AuthResult =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      readonly status: 401 | 403;
      readonly reason: AuthFailureReason;
      readonly message: string;
    };

const MESSAGES: Record<AuthFailureReason, string> = {
  missing: 'a credential is required (X-API-Key or Authorization: Bearer)',
  malformed: 'the credential is not a valid sk_live_, pk_live_ or tok_ value',
  unknown: 'no such key',
  expired: 'the token has expired; obtain a new one from POST /api/auth/token',
  revoked: 'the key has been revoked',
  origin: 'the Origin is not allowed for this public key',
  scope: 'the credential lacks the scope this needs',
};

function fail(reason: AuthFailureReason): AuthResult {
  return { ok: false, status: reason === 'scope' ? 403 : 401, reason, message: MESSAGES[reason] };
}

function principalOf(k: KeyRecord, viaToken: boolean): Principal {
  return {
    keyId: k.keyId,
    kind: k.kind,
    scopes: k.scopes,
    rateLimit: k.rateLimit,
    allowedOrigins: k.allowedOrigins,
    name: k.name,
    viaToken,
  };
}

/**
 * Checks `input.credential`.
 * @param input.credential the raw credential, or undefined/'' when none was sent (→ `missing`).
 * @param input.origin the request's `Origin` header; required (and matched) for public keys and their tokens.
 * @param input.now Unix ms.
 * @param input.scope when given, a valid credential without it yields 403 `scope`.
 * @returns a principal, or the failure with its HTTP status (401; 403 only for `scope`).
 */
export function authenticate(
  table: KeyLookup,
  input: {
    credential: string | null | undefined;
    origin?: string | null | undefined;
    now: number;
    scope?: Scope;
  },
): AuthResult {
  if (input.credential === undefined || input.credential === null || input.credential === '')
    return fail('missing');
  const cred = parseCredential(input.credential);
  if (!cred) return fail('malformed');
  let key: KeyRecord | undefined;
  if (cred.kind === 'token') {
    const t = verifyToken(table.tokenSecret, cred.token, input.now);
    if (!t.ok) return fail(t.reason);
    key = table.get(t.keyId);
  } else {
    key = table.findBySecretHash(secretHash(cred.secret));
  }
  // A deleted key (and its tokens) is unknown; constant-time hash compare is unnecessary: the map
  // lookup is by a SHA-256 digest, which leaks nothing about the secret.
  if (!key) return fail('unknown');
  if (key.revokedAtMs !== null) return fail('revoked');
  if (
    key.kind === 'public' &&
    !originAllowed(input.origin, key.allowedOrigins) &&
    !originOnHost(input.origin, key.boundDomain)
  )
    return fail('origin');
  const principal = principalOf(key, cred.kind === 'token');
  if (input.scope && !hasScope(principal, input.scope)) return fail('scope');
  return { ok: true, principal };
}
