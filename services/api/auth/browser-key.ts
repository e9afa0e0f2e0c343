/**
 * Browser-bound public keys (docs/contract.md "Credentials": a public key for a (visitor_id, bound_domain)
 * pair; "Authentication" 8: the same pair yields the key again).
 *
 * Decided here: both the key id and the secret are derived from the pair with HMAC-SHA256 under the
 * token signing secret (domain-separated labels), so the secret is never stored anywhere (only its
 * SHA-256, like every key) and the same pair can be answered again after a restart or on another
 * API node. Rotating AUTH_TOKEN_SECRET therefore issues new browser keys for every pair.
 * Pure.
 */
import { createHmac } from 'node:crypto';

/** Longest visitor_id / bound_domain accepted (characters). */
export const BROWSER_FIELD_MAX = 128;
/** Scopes of a browser key: read the REST data and stream any subscription (the demo pages do both). */
export const BROWSER_KEY_SCOPES = ['read:games', 'read:rounds', 'stream:*'] as const;
/** Requests per minute of a browser key (seed default for public keys). */
export const BROWSER_KEY_RATE_LIMIT = 100;

// RFC 1123 §2.1 host name: dot-separated labels of 1..63 letters, digits and inner hyphens.
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Validates the request fields.
 * @returns the lower-cased domain, or an error text naming the rule broken.
 */
export function checkBrowserKeyInput(
  visitorId: unknown,
  boundDomain: unknown,
): { ok: true; visitorId: string; domain: string } | { ok: false; error: string } {
  if (typeof visitorId !== 'string' || visitorId.length === 0 || visitorId.length > BROWSER_FIELD_MAX) {
    return {
      ok: false,
      error: `visitor_id must be a non-empty string of at most ${BROWSER_FIELD_MAX} characters`,
    };
  }
  if (typeof boundDomain !== 'string' || boundDomain.length === 0 || boundDomain.length > BROWSER_FIELD_MAX) {
    return {
      ok: false,
      error: `bound_domain must be a non-empty string of at most ${BROWSER_FIELD_MAX} characters`,
    };
  }
  const domain = boundDomain.toLowerCase();
  // An optional `:port` (1..65535) is accepted so a page served on a non-default port (the demo on
  // http://127.0.0.1:8080) can bind a key to its origin.
  const m = /^([^:]+)(?::([1-9][0-9]{0,4}))?$/.exec(domain);
  const host = m?.[1] ?? '';
  if (!m || Number(m[2] ?? 1) > 65535 || !host.split('.').every((l) => LABEL.test(l))) {
    return {
      ok: false,
      error:
        'bound_domain must be a host name (RFC 1123 labels: letters, digits, inner hyphens), optionally :port',
    };
  }
  return { ok: true, visitorId, domain };
}

function hmacHex(secret: Buffer, label: string, visitorId: string, domain: string): string {
  // NUL separators: neither field can contain one unambiguously shifted into the other.
  return createHmac('sha256', secret).update(`${label}\0${visitorId}\0${domain}`).digest('hex');
}

/** Key id, secret and allowed origins of the pair's browser key. */
export function deriveBrowserKey(
  secret: Buffer,
  visitorId: string,
  domain: string,
): { keyId: string; secret: string; allowedOrigins: string[] } {
  return {
    keyId: `key_${hmacHex(secret, 'browser-key-id', visitorId, domain).slice(0, 16)}`,
    secret: `pk_live_${hmacHex(secret, 'browser-key-secret', visitorId, domain)}`,
    allowedOrigins: [`https://${domain}`, `http://${domain}`],
  };
}
