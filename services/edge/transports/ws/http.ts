/**
 * The HTTP side of the WebSocket transport's upgrade: refusals (a plain status before any upgrade,
 * docs/contract.md's error body with CORS), the selection of a `/ws/…` path, and the 101 headers of a resume.
 */
import { MALFORMED_URL_TEXT } from '../../../../lib/http/error-form.ts';
import type { StreamOptions } from '../../../../lib/stream/options.ts';
import type { ResumeDecision } from '../../../../lib/stream/resume.ts';
import { parseStreamPath, type SelectionResult } from '../../../../lib/stream/selection.ts';
import type { Uws } from './uws.ts';

export const STATUS_TEXT = {
  400: '400 Bad Request',
  503: '503 Service Unavailable',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
} as const;

/** Answers an upgrade request with `status` and `{error, success: false}` (plus `reason`, Retry-After). */
export function reject(
  res: Uws.HttpResponse,
  status: keyof typeof STATUS_TEXT,
  error: string,
  extra: { reason?: string; retryAfterS?: number } = {},
): void {
  res.cork(() => {
    res
      .writeStatus(STATUS_TEXT[status])
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('Access-Control-Allow-Origin', '*');
    if (extra.retryAfterS !== undefined) res.writeHeader('Retry-After', String(extra.retryAfterS));
    const reason = extra.reason === undefined ? {} : { reason: extra.reason };
    res.end(JSON.stringify({ error, success: false, ...reason }));
  });
}

/**
 * The selection of a `/ws/…` path as the API reads a path parameter: uWS gives
 * the raw path, so each segment is percent-decoded first (`%63rash` is crash; a `%2F` stays inside
 * its segment, making it a malformed slug); a bad percent-encoding is 400 as on every listener.
 */
export function streamPathOf(url: string): SelectionResult {
  try {
    const segments = url
      .slice('/ws/'.length)
      .split('/')
      .map((s) => decodeURIComponent(s).replaceAll('/', '%2F'));
    return parseStreamPath(segments.join('/'));
  } catch {
    return { ok: false, status: 400, error: MALFORMED_URL_TEXT };
  }
}

/**
 * The 101 headers telling a resuming client whether its resume will be complete (none without `since`).
 * uWS writes headers only after a status, hence the explicit 101 (uNetworking/uWebSockets.js#331).
 */
export function writeResumeHeaders(
  res: Uws.HttpResponse,
  since: string | undefined,
  d: ResumeDecision,
): void {
  if (since === undefined) return;
  res.writeStatus('101 Switching Protocols');
  res.writeHeader('X-Stream-Recovered', d.kind === 'resume' ? 'true' : 'false');
  if (d.kind === 'live') res.writeHeader('X-Stream-Recovered-Reason', d.reason);
}

/** The selection of a `/ws/…` path, or undefined for `/ws/` itself (allowed with envelopes only). */
export function pathSelection(url: string, options: StreamOptions) {
  if (url === '/ws/' && options.envelope) return { ok: true as const, selection: undefined };
  return streamPathOf(url);
}
