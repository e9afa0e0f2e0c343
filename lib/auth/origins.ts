/**
 * Origin normalisation for public keys (docs/contract.md "Authentication" 7): an origin is compared as
 * scheme://host[:port] with the host lower-cased, the default port (80 for http, 443 for https)
 * dropped and no trailing slash or path (RFC 6454 §6.1 serialisation). Pure.
 */

/**
 * The canonical form of `origin`, or null when it is not an http(s) origin (a path, query,
 * credentials or another scheme make it invalid; a single trailing slash is tolerated).
 */
export function normalizeOrigin(origin: string | null | undefined): string | null {
  if (typeof origin !== 'string' || origin === '' || origin.length > 2048) return null;
  let u: URL;
  try {
    u = new URL(origin.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== ''))
    return null;
  // URL lower-cases the host and drops a default port already.
  return `${u.protocol}//${u.host}`;
}

/** Whether `origin` (as sent by the browser) matches one of `allowed` after normalisation of both. */
export function originAllowed(origin: string | null | undefined, allowed: readonly string[]): boolean {
  const o = normalizeOrigin(origin);
  if (o === null) return false;
  return allowed.some((a) => normalizeOrigin(a) === o);
}

/**
 * Whether `origin` is an http(s) origin on host `domain`, on any port. Browser-bound keys are bound
 * to a domain (docs/contract.md: `bound_domain` is a host name, no port), so the demo pages behind a gateway
 * on a non-default port (http://127.0.0.1:8080) can use theirs.
 */
export function originOnHost(origin: string | null | undefined, domain: string | null): boolean {
  const o = normalizeOrigin(origin);
  if (o === null || domain === null) return false;
  return new URL(o).hostname === domain.toLowerCase();
}
