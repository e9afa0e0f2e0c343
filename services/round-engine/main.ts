/**
 * Round engine process: reads config, starts the engine (recovery from the log, game loops,
 * HTTP on API_HOST:ROUND_ENGINE_PORT), and on SIGINT/SIGTERM stops after the round being
 * appended.
 */

import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadEngineConfig } from './config.ts';
import { buildRoundEngine } from './engine.ts';

const config = loadEngineConfig();
const logger = createLogger('round-engine', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const kafka = createKafka(config, 'round-engine', logger);
const engine = buildRoundEngine({
  config,
  kafka,
  logger,
  onFatal: () => {
    // A failed loop is a bug; exit so the supervisor restarts the engine, which resumes from the log.
    void engine.stop().finally(() => process.exit(1));
  },
});

try {
  await engine.start();
  logger.info({ port: engine.port(), games: config.engine.games }, 'round engine running');
} catch (err) {
  logger.fatal({ err }, 'round engine failed to start');
  await engine.stop().catch(() => {});
  process.exit(1);
}

onShutdown(logger, () => engine.stop(), { timeoutMs: config.process.shutdownTimeoutMs });
