/**
 * Settlement's operations endpoints (STYLE.md §12) on node:http: GET /health (process up),
 * GET /ready (200 when the consumer is in its group and the last database write succeeded, else
 * 503, both halves in the body), GET /metrics (Prometheus text).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Settlement } from './settlement.ts';

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and its bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export async function startSettlementHttp(
  s: Pick<Settlement, 'ready' | 'status' | 'registry'>,
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
    if (path === '/ready') return json(s.ready() ? 200 : 503, { ready: s.ready(), ...s.status() });
    if (path === '/metrics') {
      s.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': s.registry.contentType });
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
