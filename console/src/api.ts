/**
 * The console's HTTP client: same-origin JSON requests to the documented REST endpoints. The portal
 * authenticates with its session cookie (sent by the browser) plus the `x-csrf-token` header on every
 * state-changing request; the ops console with the admin key as a bearer, kept in sessionStorage
 * (gone when the tab closes).
 */
import { errorMessage } from './format.ts';

/** A failed answer: `message` is the readable text shown to the user (format.ts errorMessage). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(errorMessage(status, body));
    this.name = 'ApiError';
  }
}

const ADMIN_KEY = 'console.adminKey';

/** The admin key of this tab, or null. */
export function adminKey(): string | null {
  try {
    return sessionStorage.getItem(ADMIN_KEY);
  } catch {
    return null;
  }
}

/** Keeps (or with null forgets) the admin key for this tab. */
export function setAdminKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(ADMIN_KEY);
  else sessionStorage.setItem(ADMIN_KEY, key);
}

let csrf: string | null = null;

/** The portal session's CSRF token, set at login and when the session is read. */
export function setCsrfToken(token: string | null): void {
  csrf = token;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * One request; resolves with the parsed JSON body (null for an empty body, e.g. 204).
 * @throws ApiError for any non-2xx answer, with the API's error text; ApiError status 0 when the
 *   network failed.
 */
async function call<T>(
  method: Method,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<T> {
  const init: RequestInit = {
    method,
    headers: { accept: 'application/json', ...headers },
    credentials: 'same-origin',
  };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { error: `Network error: ${(e as Error).message}` });
  }
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed as T;
}

/** Dispatched on window when a portal request answers 401 (the session ended or expired). */
export const PORTAL_SIGNED_OUT = 'console:portal-signed-out';

/**
 * A portal request (cookie session; CSRF header on every method but GET). A 401 also dispatches
 * PORTAL_SIGNED_OUT, so the page shows the sign-in instead of an error on every view.
 */
export async function portal<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  try {
    return await call<T>(method, path, body, headers);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401 && path !== '/api/portal/session')
      window.dispatchEvent(new CustomEvent(PORTAL_SIGNED_OUT, { detail: e }));
    throw e;
  }
}

/** An ops request with the admin key as the bearer. */
export function ops<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const key = adminKey();
  return call<T>(method, path, body, key ? { authorization: `Bearer ${key}` } : {});
}
