/**
 * Simulated players (services/bots): reads config, waits for the operator file written by
 * scripts/register-sandbox.ts, runs BOTS_PLAYERS bots, logs their counters every 30 s, and
 * stops them on SIGINT/SIGTERM.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../lib/config.ts';
import { onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildBots } from './bots.ts';

const config = loadConfig();
const logger = createLogger('bots', config.logLevel);
const WAIT_FOR_OPERATOR_MS = 120_000;

const deadline = Date.now() + WAIT_FOR_OPERATOR_MS;
while (!existsSync(config.bots.operatorFile) && Date.now() < deadline) await sleep(500);
const bots = buildBots({ config, logger });
try {
  await bots.start();
} catch (err) {
  logger.fatal({ err }, 'bots failed to start');
  process.exit(1);
}
const report = setInterval(() => logger.info(bots.stats, 'bot activity'), 30_000);
onShutdown(logger, async () => {
  clearInterval(report);
  await bots.stop();
});
