/**
 * Projector process: reads config, applies pending migrations, makes sure its topics exist,
 * starts the rounds projector, the auth-keys projector (api_keys), the wallet projector
 * (wallet_transactions, wallet_balances) and the process's ops HTTP endpoints (/health, /ready
 * of all three, /metrics; on API_HOST, PROJECTOR_PORT), and on SIGINT/SIGTERM stops consuming after the
 * transaction in progress and disconnects (within SHUTDOWN_TIMEOUT_MS).
 */

import { migrateWhenReachable } from '../../lib/db/migrate.ts';
import { createSql } from '../../lib/db/pool.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import { buildAuthKeysProjector } from './auth-keys/projector.ts';
import { loadProjectorConfig } from './config.ts';
import { projectorProcessView } from './ops-http.ts';
import { buildRoundsProjector } from './projector.ts';
import { buildWalletProjector } from './wallet/projector.ts';

const config = loadProjectorConfig();
const logger = createLogger('projector', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const sql = createSql(config);
const kafka = createKafka(config, 'projector', logger);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'roundsDeadLetter', 'authKeys', 'walletTransactions']);
  await admin.disconnect();

  // One registry for the process: /metrics shows every projection, /ready waits for all three.
  const registry = createServiceRegistry('projector');
  const projector = buildRoundsProjector({ config, kafka, sql, logger, options: { registry } });
  await projector.start();
  const keysProjector = buildAuthKeysProjector({ config, kafka, sql, logger, registry });
  await keysProjector.start();
  const walletProjector = buildWalletProjector({ config, kafka, sql, logger, registry });
  await walletProjector.start();
  const view = projectorProcessView(projector, { 'auth-keys': keysProjector, wallet: walletProjector });
  const ops = await startOpsServerFor(view, config.ops.host, config.projector.port);
  logger.info({ port: ops.port }, 'projector listening');

  onShutdown(
    logger,
    async () => {
      ops.server.close();
      // Each stops after the write in progress (rows and checkpoint in one statement), so the
      // three stop side by side; the pool is ended once none of them can write any more.
      await Promise.all([projector.stop(), keysProjector.stop(), walletProjector.stop()]);
      await sql.end({ timeout: 5 });
    },
    { timeoutMs: config.process.shutdownTimeoutMs },
  );
} catch (err) {
  logger.fatal({ err }, 'projector failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
