/**
 * Gateway process: reads config, builds the one-origin reverse proxy, starts it, and on
 * SIGTERM/SIGINT closes it and exits 0.
 */

import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadGatewayConfig } from './config.ts';
import { buildGateway } from './gateway.ts';

const config = loadGatewayConfig();
const logger = createLogger('gateway', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const gateway = buildGateway({ config, logger });

try {
  await gateway.start();
} catch (err) {
  logger.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}

onShutdown(logger, () => gateway.stop(), { timeoutMs: config.process.shutdownTimeoutMs });
