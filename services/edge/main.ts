/**
 * Edge process: reads config, builds the edge (rounds source, hub, WebSocket, SSE and the other
 * transports), starts it and EDGE_WS_THREADS − 1 further WebSocket threads (ws-threads.ts), and on
 * SIGTERM/SIGINT drains open streams over EDGE_DRAIN_MS and exits 0.
 */

import { createSql } from '../../lib/db/pool.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadEdgeConfig } from './config.ts';
import { buildEdge, type Edge } from './edge.ts';
import { startWsThreads, type WsThreads } from './ws-threads.ts';

const config = loadEdgeConfig();
const logger = createLogger('edge', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.edge.drainMs + config.process.shutdownTimeoutMs);
// Read models for gRPC ListGames/GetHistory; the pool connects lazily, so a database outage only
// affects those calls, never the live streams.
const sql = createSql(config, { max: 4 });

let edge: Edge | undefined;
let threads: WsThreads | undefined;
try {
  // Building fails at once when a transport cannot run (e.g. uWS without its native binary).
  edge = buildEdge({
    config,
    logger,
    sql,
    alsoReady: () => config.edge.wsThreads === 1 || threads !== undefined,
    moreMetrics: async () => (threads ? threads.metrics() : []),
  });
  await edge.start();
  // Further WebSocket threads on the same port (EDGE_WS_THREADS; ws-threads.ts).
  if (config.edge.wsThreads > 1)
    threads = await startWsThreads(config.edge.wsThreads - 1, edge.portOf('ws'), logger);
} catch (err) {
  logger.fatal({ err }, 'edge failed to start');
  await edge?.stop(0).catch(() => {});
  process.exit(1);
}

onShutdown(
  logger,
  async () => {
    await Promise.all([edge?.stop(), threads?.stop(config.edge.drainMs)]);
    await sql.end({ timeout: 2 });
  },
  {
    fields: { drainMs: config.edge.drainMs },
    timeoutMs: config.edge.drainMs + config.process.shutdownTimeoutMs,
  },
);
