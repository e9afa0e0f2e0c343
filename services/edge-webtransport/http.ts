/**
 * The WebTransport edge's plain HTTP endpoints (WT_HTTP_PORT), as a fetch-style handler that
 * `Deno.serve` runs: `/health`, `/ready`, `/cert-hash` (the hash pages pass as
 * `serverCertificateHashes`; the gateway serves it as `/webtransport/cert-hash`) and `/metrics`.
 * Every response carries the CORS headers of docs/contract.md, so a page on another origin can read the
 * hash; OPTIONS preflights answer 204.
 */
import type { Registry } from 'prom-client';
import { type CertificateInfo, certHashBody } from './cert.ts';

const CORS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type',
};

export interface HttpDeps {
  readonly certificate: CertificateInfo;
  readonly register: Registry;
  /** True once the rounds source is live and the QUIC listener accepts sessions. */
  readonly isReady: () => boolean;
}

function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...CORS, 'content-type': 'application/json; charset=utf-8', ...extra },
  });
}

/**
 * Builds the handler. Unknown paths: 404; methods other than GET/HEAD/OPTIONS: 405; a failure
 * inside: 500. Every error is `{error, success: false}` with the CORS headers.
 */
export function createHttpHandler(deps: HttpDeps): (req: Request) => Promise<Response> {
  const handle = route(deps);
  return async (req) => {
    try {
      return await handle(req);
    } catch {
      return json(500, { error: 'Internal Server Error', success: false });
    }
  };
}

function route(deps: HttpDeps): (req: Request) => Promise<Response> {
  return async (req) => {
    const { pathname } = new URL(req.url);
    if (req.method === 'OPTIONS') return new Response(null, { status: 204, headers: CORS });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return json(405, { error: 'Method not allowed', success: false }, { allow: 'GET, HEAD, OPTIONS' });
    }
    switch (pathname) {
      case '/health':
        return json(200, { status: 'ok' });
      case '/ready': {
        const ready = deps.isReady();
        return json(ready ? 200 : 503, { status: ready ? 'ready' : 'starting' });
      }
      case '/cert-hash':
        // no-store: the development certificate is replaced every 13 days.
        return json(200, certHashBody(deps.certificate), { 'cache-control': 'no-store' });
      case '/metrics':
        return new Response(await deps.register.metrics(), {
          status: 200,
          headers: { ...CORS, 'content-type': deps.register.contentType },
        });
      default:
        return json(404, { error: 'Not found', success: false });
    }
  };
}
