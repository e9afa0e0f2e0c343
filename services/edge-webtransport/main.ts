/**
 * WebTransport edge process (Deno): reads config, builds the edge, starts it, and on
 * SIGTERM/SIGINT ends open sessions over EDGE_DRAIN_MS and exits 0.
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

try {
  await edge.start();
} catch (err) {
  logger.fatal({ err }, 'webtransport edge failed to start');
  await edge.stop(0).catch(() => {});
  Deno.exit(1);
}

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, drainMs: config.edge.drainMs }, 'draining');
  try {
    await edge.stop();
    Deno.exit(0);
  } catch (err) {
    logger.error({ err }, 'unclean shutdown');
    Deno.exit(1);
  }
};
Deno.addSignalListener('SIGINT', () => void stop('SIGINT'));
Deno.addSignalListener('SIGTERM', () => void stop('SIGTERM'));
