/**
 * WebTransport edge process (Deno): reads config, builds the edge, starts it, and on
 * SIGTERM/SIGINT ends open sessions over EDGE_DRAIN_MS and exits 0 (1 past EDGE_DRAIN_MS +
 * SHUTDOWN_TIMEOUT_MS).
 *
 *   npx deno run --unstable-net --allow-net --allow-read --allow-write=.data --allow-env --allow-sys \
 *     services/edge-webtransport/main.ts
 */
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadWtConfig } from './config.ts';
import { buildWtEdge } from './edge.ts';

const config = loadWtConfig();
const logger = createLogger('edge-webtransport', config.process.logLevel);
const timeoutMs = config.edge.drainMs + config.process.shutdownTimeoutMs;
// The Node services' shutdown (lib/lifecycle.ts runs under Deno's Node compatibility): a signal
// during start-up is held until the stop below is registered.
holdSignals(logger, timeoutMs);
const edge = buildWtEdge({ config, logger });

try {
  await edge.start();
} catch (err) {
  logger.fatal({ err }, 'webtransport edge failed to start');
  await edge.stop(0).catch(() => {});
  Deno.exit(1);
}

onShutdown(logger, () => edge.stop(), { fields: { drainMs: config.edge.drainMs }, timeoutMs });
