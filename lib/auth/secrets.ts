/**
 * Secrets of the session API. Every bearer credential is stored only as its SHA-256
 * hex (docs/contract.md "Credentials"); the signing secret is stored as is because
 * the wallet-saga signs callbacks with it. Random bytes come from the CSPRNG; no I/O, no clock.
 */
import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 of `s` as 64 lower-case hex. */
export const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Operator bearer for request-access and the session endpoints: `op_` + 64 hex. */
export const newOperatorToken = (): string => `op_${randomBytes(32).toString('hex')}`;

/** Operator id: `opr_` + 16 hex. */
export const newOperatorId = (): string => `opr_${randomBytes(8).toString('hex')}`;

/** Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes (the library's format). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The session token sent to the operator in every callback: `st_` + 64 hex. */
export const newSessionToken = (): string => `st_${randomBytes(32).toString('hex')}`;

/** One-time launch code of a game URL: 43 base64url characters (256 bits). */
export const newLaunchCode = (): string => randomBytes(32).toString('base64url');

/** Player bearer returned by POST /play/open: `pt_` + 64 hex. */
export const newPlayerToken = (): string => `pt_${randomBytes(32).toString('hex')}`;

/** The bearer of `Authorization: Bearer <x>`, or undefined when the header is absent or another scheme. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
