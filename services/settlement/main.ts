/**
 * Settlement process: reads config, applies pending migrations, makes sure its topics exist,
 * starts the processor and its /health, /ready, /metrics (API_HOST, SETTLEMENT_HTTP_PORT), and on
 * SIGINT/SIGTERM stops after the batch in progress.
 */

import { migrateWhenReachable } from '../../lib/db/migrate.ts';
import { createSql } from '../../lib/db/pool.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadSettlementConfig } from './config.ts';
import { buildSettlement } from './settlement.ts';

const config = loadSettlementConfig();
const logger = createLogger('settlement', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
// Two consumers' writes, fenced appends that hold a transaction across the append, and claims.
const sql = createSql(config, { max: 6 });
const kafka = createKafka(config, 'settlement', logger);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'walletTransactions']);
  await admin.disconnect();
  const settlement = buildSettlement({ config, kafka, sql, logger });
  await settlement.start();
  // /health, /ready (consumer in its group and last database write succeeded), /metrics.
  const http = await startOpsServerFor(settlement, config.ops.host, config.settlement.httpPort);
  logger.info({ port: http.port }, 'settlement listening');
  onShutdown(
    logger,
    async () => {
      http.server.close();
      await settlement.stop();
      await sql.end({ timeout: 5 });
    },
    { timeoutMs: config.process.shutdownTimeoutMs },
  );
} catch (err) {
  logger.fatal({ err }, 'settlement failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
