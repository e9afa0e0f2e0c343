/**
 * Where the client gets the credential of each connection (docs/contract.md "Authentication"): a
 * short-lived token (15 s) is fetched anew for every connection and reconnection, because the
 * WebSocket carries it in the handshake and a token outlives no reconnect.
 */

export type Credentials =
  /** An API key (public `pk_live_…` in browsers): exchanged for a token at `tokenEndpoint` (default `/api/auth/token`). */
  | { readonly apiKey: string; readonly tokenEndpoint?: string }
  /** The application's own endpoint that answers `{token}` (its server holds the key); POSTed with `init`. */
  | { readonly tokenUrl: string; readonly init?: RequestInit }
  /** A function giving a credential (a token or a key) for each connection; undefined connects without one. */
  | { readonly getCredential: () => Promise<string | undefined> };

/** A credential could not be obtained. */
export class CredentialError extends Error {
  constructor(
    message: string,
    /** HTTP status of the token answer, when there was one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CredentialError';
  }
}

async function tokenFrom(url: string, init: RequestInit, doFetch: typeof fetch): Promise<string> {
  const res = await doFetch(url, { method: 'POST', cache: 'no-store', ...init });
  if (!res.ok) throw new CredentialError(`token endpoint answered ${res.status}`, res.status);
  const body = (await res.json()) as { token?: unknown };
  if (typeof body.token !== 'string') throw new CredentialError('token endpoint answered without a token');
  return body.token;
}

/**
 * The credential for a new connection.
 * @throws CredentialError when the token endpoint refuses or cannot be reached.
 */
export async function credentialFor(
  c: Credentials | undefined,
  baseUrl: string,
  doFetch: typeof fetch,
): Promise<string | undefined> {
  if (!c) return undefined;
  if ('getCredential' in c) return c.getCredential();
  if ('tokenUrl' in c) return tokenFrom(new URL(c.tokenUrl, baseUrl).toString(), c.init ?? {}, doFetch);
  const url = new URL(c.tokenEndpoint ?? '/api/auth/token', baseUrl).toString();
  return tokenFrom(url, { headers: { 'X-API-Key': c.apiKey } }, doFetch);
}
