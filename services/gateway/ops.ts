/**
 * The gateway's own operations endpoints, on a listener of their own (GATEWAY_OPS_PORT): on the
 * proxy port every path but `/health` belongs to an upstream (`/metrics` and `/ready` there are
 * the API's), as a reverse proxy's admin port is kept apart from its traffic (docs/decisions/readiness/0003-ops-ports-and-health.md).
 *
 * - /health: the process runs.
 * - /ready: 200 when the proxy listens and the API upstream, which serves the pages and every path
 *   not routed elsewhere, answers its /health within `PROBE_TIMEOUT_MS`; the edges' answers are in
 *   the body only, since the pages still load without them.
 * - /metrics: `service="gateway"` process metrics, `http_request_duration_seconds` of proxied
 *   requests, open WebSocket tunnels and upstream failures.
 */
import { get } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Readiness } from '../../lib/http/ops.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import type { GatewayConfig } from './config.ts';

/** How long /ready waits for each upstream's /health, ms. */
const PROBE_TIMEOUT_MS = 1000;

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Proxied requests that failed upstream, by status (502 unreachable, 504 timed out). */
  readonly upstreamFailures: Counter<'status'>;
}

/** The registry; `openTunnels` is read at scrape time. */
export function createGatewayMetrics(openTunnels: () => number): GatewayMetrics {
  const registry = createServiceRegistry('gateway');
  new Gauge({
    name: 'gateway_ws_tunnels',
    help: 'Open WebSocket tunnels to the edge.',
    registers: [registry],
    collect() {
      this.set(openTunnels());
    },
  });
  return {
    registry,
    upstreamFailures: new Counter({
      name: 'gateway_upstream_failures_total',
      help: 'Proxied requests answered 502 or 504 because the upstream failed, by status.',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
  };
}

/** `"ok"` when `/health` on the Unix socket `path` answers 200 within `timeoutMs`, else why not. Never throws. */
function probeSocket(path: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const req = get({ socketPath: path, path: '/health', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 'ok' : `status ${res.statusCode}`);
    });
    req.once('timeout', () => {
      req.destroy();
      resolve(`no answer within ${timeoutMs} ms`);
    });
    req.once('error', (err) => resolve(err.message));
  });
}

/** `"ok"` when `${origin}/health` answers 200 within `timeoutMs`, else why not. Never throws. */
async function probe(origin: string, timeoutMs: number): Promise<string> {
  try {
    const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok ? 'ok' : `status ${res.status}`;
  } catch (err) {
    return (err as Error).name === 'TimeoutError'
      ? `no answer within ${timeoutMs} ms`
      : (err as Error).message;
  }
}

/** The /ready check described above. */
export function gatewayReadiness(
  upstreams: GatewayConfig['gateway']['upstreams'],
  listening: () => boolean,
): () => Promise<Readiness> {
  return async () => {
    const [api, edgeHttp, wtHttp] = await Promise.all([
      upstreams.apiSocket
        ? probeSocket(upstreams.apiSocket, PROBE_TIMEOUT_MS)
        : probe(upstreams.api, PROBE_TIMEOUT_MS),
      probe(upstreams.edgeHttp, PROBE_TIMEOUT_MS),
      probe(upstreams.wtHttp, PROBE_TIMEOUT_MS),
    ]);
    return {
      ready: listening() && api === 'ok',
      listening: listening(),
      upstreams: { api, edgeHttp, wtHttp },
    };
  };
}
