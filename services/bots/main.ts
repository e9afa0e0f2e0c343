/**
 * Simulated players (services/bots): reads config, registers graceful shutdown first (a SIGTERM
 * while it still waits for the operator file ends it cleanly too), waits for the operator file
 * written by scripts/register-sandbox.ts, runs BOTS_PLAYERS bots, logs their counters every 30 s,
 * and stops them on SIGINT/SIGTERM. /health, /ready and /metrics are on API_HOST:BOTS_HTTP_PORT
 * (ops.ts) from the start.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildBots } from './bots.ts';
import { loadBotsConfig } from './config.ts';
import { startBotsOps } from './ops.ts';

const config = loadBotsConfig();
const logger = createLogger('bots', config.process.logLevel);
// A SIGTERM while the ops endpoints start is held until the stop below is registered.
holdSignals(logger, config.process.shutdownTimeoutMs);
const WAIT_FOR_OPERATOR_MS = 120_000;

const bots = buildBots({ config, logger });
// Up before the wait for the operator file, so a supervisor sees the process live (/health) and
// not ready (/ready 503) while it waits.
const ops = await startBotsOps(bots, config).catch((err: unknown) => {
  logger.fatal({ err }, 'bots failed to start');
  process.exit(1);
});
logger.info({ port: ops.port }, 'bots ops endpoints listening');
const waiting = new AbortController();
let report: NodeJS.Timeout | undefined;
onShutdown(
  logger,
  async () => {
    waiting.abort();
    clearInterval(report);
    await bots.stop();
    await ops.close();
  },
  { timeoutMs: config.process.shutdownTimeoutMs },
);

const deadline = Date.now() + WAIT_FOR_OPERATOR_MS;
while (!existsSync(config.bots.operatorFile) && Date.now() < deadline && !waiting.signal.aborted)
  await sleep(500, undefined, { signal: waiting.signal }).catch(() => {});
if (!waiting.signal.aborted) {
  try {
    await bots.start();
  } catch (err) {
    logger.fatal({ err }, 'bots failed to start');
    process.exit(1);
  }
  report = setInterval(() => logger.info(bots.stats, 'bot activity'), 30_000);
}
