/**
 * Operator sandbox process: reads config, connects to Postgres in SANDBOX_DB_SCHEMA, applies the
 * ledger migrations, listens on SANDBOX_HOST:SANDBOX_PORT, and shuts down on SIGINT/SIGTERM.
 */

import { migrateWhenReachable } from '../../lib/db/migrate.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildOperatorSandbox, createSandboxSql, SANDBOX_MIGRATIONS_DIR } from './app.ts';
import { loadSandboxConfig } from './config.ts';

const config = loadSandboxConfig();
const logger = createLogger('operator-sandbox', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const sql = createSandboxSql(config);

try {
  await migrateWhenReachable(sql, config.sandbox.dbSchema, logger, SANDBOX_MIGRATIONS_DIR);
  const app = await buildOperatorSandbox({ config, sql, logger });
  await app.listen({ host: config.sandbox.host, port: config.sandbox.port });

  onShutdown(
    logger,
    async () => {
      await app.close();
      await sql.end({ timeout: 5 });
    },
    { timeoutMs: config.process.shutdownTimeoutMs },
  );
} catch (err) {
  logger.fatal({ err }, 'operator-sandbox failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
