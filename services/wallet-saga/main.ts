/**
 * Wallet saga process: reads config, applies pending migrations (the operators table must exist),
 * makes sure its topics exist, starts the saga and its ops endpoints (API_HOST,
 * WALLET_SAGA_HTTP_PORT), and on SIGINT/SIGTERM stops retries, commits what is finished and
 * disconnects; a failure to start exits 1.
 */

import { migrateWhenReachable } from '../../lib/db/migrate.ts';
import { createSql } from '../../lib/db/pool.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadWalletSagaConfig } from './config.ts';
import { buildWalletSaga } from './saga.ts';

const config = loadWalletSagaConfig();
const logger = createLogger('wallet-saga', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const sql = createSql(config);
const kafka = createKafka(config, 'wallet-saga', logger);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['walletTransactions']);
  await admin.disconnect();

  const saga = buildWalletSaga({
    config,
    kafka,
    sql,
    logger,
  });
  await saga.start();
  // /health, /ready (the processes' consumer in its group with its database, not failed), /metrics.
  const ops = await startOpsServerFor(saga, config.ops.host, config.walletSaga.httpPort);
  logger.info({ port: ops.port }, 'wallet saga listening');

  onShutdown(
    logger,
    async () => {
      ops.server.close();
      await saga.stop();
      await sql.end({ timeout: 5 });
    },
    { timeoutMs: config.process.shutdownTimeoutMs },
  );
} catch (err) {
  logger.fatal({ err }, 'wallet saga failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
