/**
 * The bots' operations endpoints (lib/http/ops.ts) on API_HOST:BOTS_HTTP_PORT: /health while the
 * process runs, /ready once the bots read the operator file and started (503 while main.ts still
 * waits for it), /metrics with `service="bots"` (sessions opened, bets placed, failed requests,
 * bots running, process metrics).
 */

import { type OpsServer, startOpsServer } from '../../lib/http/ops.ts';
import type { Bots } from './bots.ts';
import type { BotsConfig } from './config.ts';

/**
 * Listens on `config.ops.host`:`config.bots.httpPort` (0 = any free port).
 * @throws the listen error (e.g. EADDRINUSE).
 */
export function startBotsOps(
  bots: Pick<Bots, 'ready' | 'registry' | 'stats'>,
  config: Pick<BotsConfig, 'ops' | 'bots'>,
): Promise<OpsServer> {
  return startOpsServer({
    host: config.ops.host,
    port: config.bots.httpPort,
    registry: bots.registry,
    ready: () => ({ ready: bots.ready(), players: config.bots.players, ...bots.stats }),
  });
}
