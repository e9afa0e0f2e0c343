/**
 * WebTransport edge process (Deno): reads config, builds the edge, starts it, and on
 * SIGTERM/SIGINT ends open sessions over EDGE_DRAIN_MS and exits 0 (1 past EDGE_DRAIN_MS +
 * SHUTDOWN_TIMEOUT_MS).
 *
 *   npx deno run --unstable-net --allow-net --allow-read --allow-write=.data --allow-env --allow-sys \
 *     services/edge-webtransport/main.ts
 */
import { createLogger } from '../../lib/logger.ts';
import { loadWtConfig } from './config.ts';
import { buildWtEdge } from './edge.ts';

const config = loadWtConfig();
const logger = createLogger('edge-webtransport', config.logLevel);
const edge = buildWtEdge({ config, logger });

// Listening before the start: a signal during start-up lets the start finish, then drains (the
// same behaviour as lib/lifecycle.ts holdSignals gives the Node services).
let started: Promise<unknown> = Promise.resolve();
let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  const timeoutMs = config.edge.drainMs + config.shutdownTimeoutMs;
  logger.info({ signal, drainMs: config.edge.drainMs, timeoutMs }, 'draining');
  // The same bound as lib/lifecycle.ts gives the Node services: a stop that hangs exits 1.
  const timer = setTimeout(() => {
    logger.error({ timeoutMs }, 'shutdown did not finish in time; exiting');
    Deno.exit(1);
  }, timeoutMs);
  try {
    await started.catch(() => {});
    await edge.stop();
    clearTimeout(timer);
    Deno.exit(0);
  } catch (err) {
    logger.error({ err }, 'unclean shutdown');
    Deno.exit(1);
  }
};
Deno.addSignalListener('SIGINT', () => void stop('SIGINT'));
Deno.addSignalListener('SIGTERM', () => void stop('SIGTERM'));

try {
  started = edge.start();
  await started;
} catch (err) {
  logger.fatal({ err }, 'webtransport edge failed to start');
  await edge.stop(0).catch(() => {});
  Deno.exit(1);
}
