/**
 * Stateless short-lived tokens (docs/contract.md "Credentials"; docs/contract.md: 15 s).
 *
 * Layout of the bytes behind `tok_` (hex, 49 bytes = 98 hex characters, TOKEN_HEX_LENGTH):
 *   [0]      version (1)
 *   [1..8]   key id (the 8 bytes of `key_<16 hex>`)
 *   [9..16]  expiry, Unix ms, unsigned 64-bit big-endian
 *   [17..48] HMAC-SHA256(signing secret, bytes 0..16)
 * Any process holding the signing secret verifies a token without a database; the parent key's
 * revocation and origin restriction are then applied by the verifier from the key table.
 * Pure: the time comes in as an argument.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Token lifetime in seconds (docs/contract.md "Credentials"). */
export const TOKEN_TTL_S = 15;
const VERSION = 1;
const BODY = 17;
const TOTAL = BODY + 32;
export const TOKEN_HEX_LENGTH = TOTAL * 2;

function mac(secret: Buffer, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/**
 * Issues a token for `keyId` valid until `nowMs + 15000` (inclusive).
 * @param secret the signing secret (32 bytes, AUTH_TOKEN_SECRET).
 * @throws Error when `keyId` is not `key_` + 16 hex.
 */
export function issueToken(
  secret: Buffer,
  keyId: string,
  nowMs: number,
): { token: string; expiresAtMs: number } {
  if (!/^key_[0-9a-f]{16}$/.test(keyId)) throw new Error(`issueToken: not a key id: ${keyId}`);
  const expiresAtMs = nowMs + TOKEN_TTL_S * 1000;
  const body = Buffer.alloc(BODY);
  body.writeUInt8(VERSION, 0);
  Buffer.from(keyId.slice(4), 'hex').copy(body, 1);
  body.writeBigUInt64BE(BigInt(expiresAtMs), 9);
  return { token: `tok_${Buffer.concat([body, mac(secret, body)]).toString('hex')}`, expiresAtMs };
}

export type TokenCheck =
  | { readonly ok: true; readonly keyId: string; readonly expiresAtMs: number }
  | { readonly ok: false; readonly reason: 'malformed' | 'expired' };

/**
 * Verifies a `tok_…` string: shape, HMAC (constant-time compare) and expiry (`nowMs <= expiry`).
 * A token whose HMAC does not match (tampered, or signed with another secret) is `malformed`:
 * it was never issued here. Expiry is checked only after the HMAC, so a forged expiry cannot pass.
 */
export function verifyToken(secret: Buffer, token: string, nowMs: number): TokenCheck {
  const hex = token.startsWith('tok_') ? token.slice(4) : '';
  if (hex.length !== TOKEN_HEX_LENGTH || !/^[0-9a-f]+$/.test(hex)) return { ok: false, reason: 'malformed' };
  const bytes = Buffer.from(hex, 'hex');
  const body = bytes.subarray(0, BODY);
  if (body.readUInt8(0) !== VERSION) return { ok: false, reason: 'malformed' };
  if (!timingSafeEqual(mac(secret, body), bytes.subarray(BODY))) return { ok: false, reason: 'malformed' };
  const expiresAtMs = Number(body.readBigUInt64BE(9));
  if (nowMs > expiresAtMs) return { ok: false, reason: 'expired' };
  return { ok: true, keyId: `key_${body.subarray(1, 9).toString('hex')}`, expiresAtMs };
}
