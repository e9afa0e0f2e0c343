/**
 * The saga's operations endpoints (lib/ops-http.ts): GET /health (process up), GET /ready (200
 * when in the consumer group and not failed, else 503), GET /metrics (Prometheus text,
 * `service="wallet-saga"`).
 */
import { type OpsServer, startOpsServer } from '../../lib/ops-http.ts';
import type { WalletSaga } from './saga.ts';

/**
 * Listens on `host`:`port` (0 = any free port).
 * @returns the server and the bound port.
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function startSagaOpsServer(
  saga: Pick<WalletSaga, 'ready' | 'status' | 'metrics'>,
  host: string,
  port: number,
): Promise<OpsServer> {
  return startOpsServer({
    host,
    port,
    registry: saga.metrics.registry,
    ready: () => ({ ready: saga.ready(), ...saga.status() }),
  });
}
