/**
 * REST API process: reads config, connects to Postgres, applies pending migrations (so the API
 * can start before the projector), listens, and shuts down gracefully on SIGINT/SIGTERM.
 */

import { startKeyTable } from '../../lib/auth/key-table.ts';
import { loadConfig } from '../../lib/config.ts';
import { createSql } from '../../lib/db.ts';
import { createKafka } from '../../lib/kafka.ts';
import { onShutdown } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/logger.ts';
import { migrateWhenReachable } from '../../lib/migrate.ts';
import { buildApi } from './app.ts';
import { ensureAdminKey } from './auth/bootstrap.ts';
import { LastUsed } from './auth/guard.ts';
import { startLastUsedWriter } from './auth/last-used.ts';

const config = loadConfig();
const logger = createLogger('api', config.logLevel);
const sql = createSql(config);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  const kafka = createKafka(config, 'api', logger);
  const table = await startKeyTable({ config, kafka, logger });
  // Idempotent: key appends are retried without duplicates.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await ensureAdminKey({ config, table, producer, now: Date.now() });
  const lastUsed = new LastUsed();
  const usage = startLastUsedWriter({ sql, lastUsed, periodMs: config.auth.batchMs, logger });
  const app = await buildApi({ config, sql, logger, auth: { table, producer, lastUsed } });
  await app.listen({ host: config.api.host, port: config.api.port });

  onShutdown(logger, async () => {
    await app.close();
    await usage.stop();
    await producer.disconnect();
    await table.close();
    await sql.end({ timeout: 5 });
  });
} catch (err) {
  logger.fatal({ err }, 'api failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
