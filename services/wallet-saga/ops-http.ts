/**
 * The saga's operations endpoints (STYLE.md §12) on plain node:http, since it serves no API:
 * GET /health (process up), GET /ready (200 when in the consumer group and not failed, else 503),
 * GET /metrics (Prometheus text).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WalletSaga } from './saga.ts';

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and the bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export async function startSagaOpsServer(
  saga: Pick<WalletSaga, 'ready' | 'status' | 'metrics'>,
  host: string,
  port: number,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return json(405, { error: 'Method not allowed', success: false });
    if (path === '/health') return json(200, { status: 'ok' });
    if (path === '/ready') return json(saga.ready() ? 200 : 503, { ready: saga.ready(), ...saga.status() });
    if (path === '/metrics') {
      const registry = saga.metrics.registry;
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        (err: unknown) => json(500, { error: (err as Error).message, success: false }),
      );
      return;
    }
    return json(404, { error: 'Not found', success: false });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}
