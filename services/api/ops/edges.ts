/**
 * The edges as the ops console shows them: for each base URL of OPS_EDGE_URLS (config.ts), the
 * edge's `/ready` verdict and its open subscriptions per protocol from `/metrics`
 * (`edge_subscribers{protocol}`, lib/stream/metrics.ts and services/edge-webtransport/metrics.ts).
 * Each read has its own deadline (OPS_EDGE_TIMEOUT_MS); an edge that does not answer, or answers
 * something unreadable, is listed with `ready: false` and the error, never failing the whole list.
 *
 * The metric's protocol labels are the edges' own: `ws`, `sse`, `grpc` and `grpc-proxy` (the
 * edge's gRPC-Web proxy, counted as gRPC), `webtransport`. Samples of several WebSocket threads
 * (label `thread`) are summed.
 */
import { samplesOf } from '../../../lib/metrics-text.ts';

/** Open subscriptions of one edge per protocol. */
export interface Subscribers {
  readonly websocket: number;
  readonly sse: number;
  readonly grpc: number;
  readonly webtransport: number;
}

export interface EdgeView {
  readonly url: string;
  /** `/ready` answered 200. */
  readonly ready: boolean;
  /** The `status` of the `/ready` body (`ready`, `starting`), or null when there was none. */
  readonly status: string | null;
  /** From `/metrics`; null when the metrics could not be read. */
  readonly subscribers: Subscribers | null;
  /** Why the edge is not ready or its metrics are missing (unreachable, timeout, HTTP status). */
  readonly error: string | null;
}

const PROTOCOLS: Readonly<Record<string, keyof Subscribers>> = {
  ws: 'websocket',
  sse: 'sse',
  grpc: 'grpc',
  'grpc-proxy': 'grpc',
  webtransport: 'webtransport',
};

/** Sums `edge_subscribers` per protocol in a Prometheus text exposition. */
export function subscribersOf(text: string): Subscribers {
  const out = { websocket: 0, sse: 0, grpc: 0, webtransport: 0 };
  for (const s of samplesOf(text, 'edge_subscribers')) {
    const key = PROTOCOLS[s.labels.protocol ?? ''];
    if (key && Number.isFinite(s.value)) out[key] += s.value;
  }
  return out;
}

/** GET `url` with a deadline. @throws Error naming the timeout or the network failure. */
async function get(url: string, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') throw new Error(`no answer within ${timeoutMs} ms`);
    const cause = (e.cause as { code?: string; message?: string } | undefined) ?? {};
    throw new Error(`unreachable: ${cause.code ?? cause.message ?? e.message}`);
  }
}

/** Reads one edge (see the module comment); never throws. */
export async function readEdge(url: string, timeoutMs: number): Promise<EdgeView> {
  const errors: string[] = [];
  let ready = false;
  let status: string | null = null;
  let subscribers: Subscribers | null = null;
  await Promise.all([
    (async () => {
      try {
        const r = await get(`${url}/ready`, timeoutMs);
        const body = (await r.json().catch(() => null)) as { status?: unknown } | null;
        status = typeof body?.status === 'string' ? body.status : null;
        ready = r.status === 200;
        if (!ready) errors.push(`/ready answered ${r.status}${status ? ` (${status})` : ''}`);
      } catch (err) {
        errors.push(`/ready: ${(err as Error).message}`);
      }
    })(),
    (async () => {
      try {
        const r = await get(`${url}/metrics`, timeoutMs);
        if (r.status !== 200) {
          errors.push(`/metrics answered ${r.status}`);
          return;
        }
        subscribers = subscribersOf(await r.text());
      } catch (err) {
        errors.push(`/metrics: ${(err as Error).message}`);
      }
    })(),
  ]);
  return { url, ready, status, subscribers, error: errors.length > 0 ? errors.join('; ') : null };
}

/** Reads every edge of `urls` at once, in the given order. */
export function readEdges(urls: readonly string[], timeoutMs: number): Promise<EdgeView[]> {
  return Promise.all(urls.map((u) => readEdge(u, timeoutMs)));
}
