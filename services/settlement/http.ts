/**
 * Settlement's operations endpoints (lib/ops-http.ts): GET /health (process up), GET /ready (200
 * when the consumer is in its group and the last database write succeeded, else 503, both halves
 * in the body), GET /metrics (Prometheus text, `service="settlement"`).
 */
import { type OpsServer, startOpsServer } from '../../lib/ops-http.ts';
import type { Settlement } from './settlement.ts';

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and its bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function startSettlementHttp(
  s: Pick<Settlement, 'ready' | 'status' | 'registry'>,
  host: string,
  port: number,
): Promise<OpsServer> {
  return startOpsServer({
    host,
    port,
    registry: s.registry,
    ready: () => ({ ready: s.ready(), ...s.status() }),
  });
}
