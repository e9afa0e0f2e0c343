/**
 * Credential formats of docs/contract.md "Credentials" and docs/architecture.md (hashed secrets): private keys
 * `sk_live_` + 64 lower-case hex, public keys `pk_live_` + 32..64 lower-case hex, tokens `tok_` + hex
 * (layout in tokens.ts). Only SHA-256(secret) as hex is ever stored; a key is named by a separate
 * random id `key_` + 16 hex so the id can be shown, logged and put in tokens without exposing the secret.
 * Pure: no I/O, no clock (random bytes come from the CSPRNG).
 */
import { createHash, randomBytes } from 'node:crypto';

export type KeyKind = 'private' | 'public';

/** A parsed credential: a key secret (to be hashed and looked up) or a token (to be verified). */
export type Credential =
  | { readonly kind: 'private'; readonly secret: string }
  | { readonly kind: 'public'; readonly secret: string }
  | { readonly kind: 'token'; readonly token: string };

const PRIVATE = /^sk_live_[0-9a-f]{64}$/;
const PUBLIC = /^pk_live_[0-9a-f]{32,64}$/;
const TOKEN = /^tok_[0-9a-f]{2,256}$/;
const KEY_ID = /^key_[0-9a-f]{16}$/;
/** Longest credential accepted at all; anything longer is malformed before any regex runs. */
export const MAX_CREDENTIAL_LENGTH = 300;

/**
 * Classifies `s` by prefix and shape.
 * @returns null for anything that is not exactly one of the three formats (wrong prefix, wrong
 *   length, upper-case or non-hex digits, surrounding spaces).
 */
export function parseCredential(s: string | null | undefined): Credential | null {
  if (typeof s !== 'string' || s.length > MAX_CREDENTIAL_LENGTH) return null;
  if (PRIVATE.test(s)) return { kind: 'private', secret: s };
  if (PUBLIC.test(s)) return { kind: 'public', secret: s };
  if (TOKEN.test(s)) return { kind: 'token', token: s };
  return null;
}

/** Whether `s` is a key id (`key_` + 16 lower-case hex). */
export function isKeyId(s: string): boolean {
  return KEY_ID.test(s);
}

/** SHA-256 of a secret as 64 lower-case hex: the only form in which secrets are stored. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A fresh random key id `key_` + 16 hex (64 random bits). */
export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/** A fresh random secret: `sk_live_` + 64 hex for private keys, `pk_live_` + 64 hex for public keys. */
export function newSecret(kind: KeyKind): string {
  return `${kind === 'private' ? 'sk_live_' : 'pk_live_'}${randomBytes(32).toString('hex')}`;
}

/** The kind a key secret denotes by its prefix. */
export function kindOfSecret(secret: string): KeyKind {
  return secret.startsWith('sk_live_') ? 'private' : 'public';
}

/**
 * Extracts the credential of a REST request: `X-API-Key`, else `Authorization: Bearer <credential>`
 * (docs/contract.md "Authentication" 2). A present but unparseable header is returned as-is so the caller
 * answers `malformed` rather than `missing`.
 * @returns undefined when neither header carries anything.
 */
export function credentialFromHeaders(headers: {
  readonly 'x-api-key'?: string | string[] | undefined;
  readonly authorization?: string | undefined;
}): string | undefined {
  const x = headers['x-api-key'];
  const apiKey = Array.isArray(x) ? x[0] : x;
  if (apiKey !== undefined && apiKey !== '') return apiKey;
  const auth = headers.authorization;
  if (auth === undefined || auth === '') return undefined;
  const m = /^Bearer[ \t]+(\S*)\s*$/i.exec(auth);
  return m ? m[1] : auth;
}
