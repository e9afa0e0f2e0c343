/**
 * Operations endpoints on plain node:http (docs/conventions.md §12) for the processes that serve no HTTP API
 * of their own (projector, settlement, wallet saga, bots) or keep them apart from the paths they
 * proxy (gateway):
 * - GET /health: 200 `{status: "ok"}` while the process runs (liveness);
 * - GET /ready: 200 when `ready()` says so, else 503, with the checks in the body (readiness);
 * - GET /metrics: the registry in Prometheus text format.
 * Other methods are 405, other paths 404, both `{error, success: false}`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** What /ready answers: `ready` decides the status; the other fields go into the body. */
export type Readiness = { readonly ready: boolean } & Readonly<Record<string, unknown>>;

export interface OpsServerOptions {
  readonly host: string;
  /** 0 = any free port. */
  readonly port: number;
  readonly registry: Registry;
  /** Called per /ready request; may be async (e.g. a database probe with its own timeout). */
  readonly ready: () => Readiness | Promise<Readiness>;
}

export interface OpsServer {
  readonly server: Server;
  /** The bound port. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Listens on `host`:`port`.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export async function startOpsServer(o: OpsServerOptions): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const fail = (err: unknown) => json(500, { error: (err as Error).message, success: false });
    if (req.method !== 'GET') return json(405, { error: 'Method not allowed', success: false });
    if (path === '/health') return json(200, { status: 'ok' });
    if (path === '/ready') {
      Promise.resolve()
        .then(o.ready)
        .then((r) => json(r.ready ? 200 : 503, r), fail);
      return;
    }
    if (path === '/metrics') {
      o.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': o.registry.contentType });
        res.end(text);
      }, fail);
      return;
    }
    return json(404, { error: 'Not found', success: false });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A component that reports its own readiness and metrics (a checkpointed consumer, settlement, the saga). */
export interface OpsView {
  ready(): boolean;
  /** Goes into the /ready body beside `ready`. */
  status(): Readonly<Record<string, unknown>>;
  readonly metrics: { readonly registry: Registry };
}

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and the bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function startOpsServerFor(view: OpsView, host: string, port: number): Promise<OpsServer> {
  return startOpsServer({
    host,
    port,
    registry: view.metrics.registry,
    ready: () => ({ ready: view.ready(), ...view.status() }),
  });
}
