/**
 * Operator sandbox process: reads config, connects to Postgres in SANDBOX_DB_SCHEMA, applies the
 * ledger migrations, listens on SANDBOX_HOST:SANDBOX_PORT, and shuts down on SIGINT/SIGTERM.
 */
import { loadConfig } from '../../lib/config.ts';
import { onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { migrateWhenReachable } from '../../lib/migrate.ts';
import { buildOperatorSandbox, createSandboxSql, SANDBOX_MIGRATIONS_DIR } from './app.ts';

const config = loadConfig();
const logger = createLogger('operator-sandbox', config.logLevel);
const sql = createSandboxSql(config);

try {
  await migrateWhenReachable(sql, config.sandbox.dbSchema, logger, SANDBOX_MIGRATIONS_DIR);
  const app = await buildOperatorSandbox({ config, sql, logger });
  await app.listen({ host: config.sandbox.host, port: config.sandbox.port });

  onShutdown(logger, async () => {
    await app.close();
    await sql.end({ timeout: 5 });
  });
} catch (err) {
  logger.fatal({ err }, 'operator-sandbox failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
