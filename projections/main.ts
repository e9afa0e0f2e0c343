/**
 * Projector process: reads config, applies pending migrations, makes sure its topics exist,
 * starts the rounds projector, the auth-keys projector (api_keys), the wallet projector
 * (wallet_transactions, wallet_balances) and the rounds projector's ops
 * HTTP endpoints (on API_HOST, PROJECTOR_PORT), and on SIGINT/SIGTERM stops consuming after the transaction in progress and disconnects.
 */

import { loadConfig } from '../lib/config.ts';
import { createSql } from '../lib/db.ts';
import { createKafka } from '../lib/kafka.ts';
import { onShutdown } from '../lib/lifecycle.ts';
import { createLogger } from '../lib/logger.ts';
import { migrateWhenReachable } from '../lib/migrate.ts';
import { ensureTopics } from '../lib/topics.ts';
import { buildAuthKeysProjector } from './auth-keys/projector.ts';
import { startOpsServer } from './ops-http.ts';
import { buildRoundsProjector } from './projector.ts';
import { buildWalletProjector } from './wallet/projector.ts';

const config = loadConfig();
const logger = createLogger('projector', config.logLevel);
const sql = createSql(config);
const kafka = createKafka(config, 'projector', logger);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'roundsDeadLetter', 'authKeys', 'walletTransactions']);
  await admin.disconnect();

  const projector = buildRoundsProjector({ config, kafka, sql, logger });
  await projector.start();
  const keysProjector = buildAuthKeysProjector({ config, kafka, sql, logger });
  await keysProjector.start();
  const walletProjector = buildWalletProjector({ config, kafka, sql, logger });
  await walletProjector.start();
  const ops = await startOpsServer(projector, config.api.host, config.projector.port);
  logger.info({ port: ops.port }, 'projector listening');

  onShutdown(logger, async () => {
    ops.server.close();
    await projector.stop();
    await keysProjector.stop();
    await walletProjector.stop();
    await sql.end({ timeout: 5 });
  });
} catch (err) {
  logger.fatal({ err }, 'projector failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
