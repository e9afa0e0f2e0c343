/**
 * Gateway process: reads config, builds the one-origin reverse proxy, starts it, and on
 * SIGTERM/SIGINT closes it and exits 0.
 */
import { loadConfig } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildGateway } from './gateway.ts';

const config = loadConfig();
const logger = createLogger('gateway', config.logLevel);
const gateway = buildGateway({ config, logger });

try {
  await gateway.start();
} catch (err) {
  logger.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  try {
    await gateway.stop();
    process.exit(0);
  } catch (err) {
    logger.error({ err }, 'unclean shutdown');
    process.exit(1);
  }
};
process.once('SIGINT', () => void stop('SIGINT'));
process.once('SIGTERM', () => void stop('SIGTERM'));
