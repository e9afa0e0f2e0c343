/**
 * REST API process: reads config, connects to Postgres, applies pending migrations (so the API
 * can start before the projector), serves from a self-healing pool (lib/db/healing-sql.ts), listens,
 * and shuts down gracefully on SIGINT/SIGTERM.
 */

import { startKeyTable } from '../../lib/auth/key-table.ts';
import { loadTokenSecret } from '../../lib/auth/token-secret.ts';
import { createHealingSql } from '../../lib/db/healing-sql.ts';
import { migrateWhenReachable } from '../../lib/db/migrate.ts';
import { createSql } from '../../lib/db/pool.ts';
import { holdSignals, onShutdown } from '../../lib/lifecycle.ts';
import { buildCheckpointedConsumer } from '../../lib/log/checkpointed-consumer.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { createRoundPhases } from '../../lib/log/round-phases.ts';
import { createLogger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import { createEngineClient } from './access/engine-client.ts';
import { freeBetReturnsSpec } from './access/free-bet-returns.ts';
import { buildApi } from './app.ts';
import { ensureAdminKey } from './auth/bootstrap.ts';
import { LastUsed } from './auth/guard.ts';
import { startLastUsedWriter } from './auth/last-used.ts';
import { loadApiConfig } from './config.ts';
import { listenApi } from './listen.ts';
import { RoundsWindow } from './rounds/window.ts';
import { startWindowFeed } from './rounds/window-feed.ts';

const config = loadApiConfig();
const logger = createLogger('api', config.process.logLevel);
// A SIGTERM during start-up is held until the stop below is registered (lib/lifecycle.ts).
holdSignals(logger, config.process.shutdownTimeoutMs);
const sql = createSql(config);

try {
  await migrateWhenReachable(sql, config.db.schema, logger);
  // Requests get 503 while Postgres is away and answers once it is back, never a hung pool.
  const db = createHealingSql({
    first: sql,
    make: () => createSql(config),
    stallMs: config.db.stallMs,
    logger,
  }).sql;
  const kafka = createKafka(config, 'api', logger);
  const registry = createServiceRegistry('api');
  const table = await startKeyTable({ config, kafka, logger, registry });
  // Idempotent: key appends are retried without duplicates.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await ensureAdminKey({ config, table, producer, now: Date.now() });
  const lastUsed = new LastUsed();
  const usage = startLastUsedWriter({ sql: db, lastUsed, periodMs: config.auth.batchMs, logger });
  // Each game's round phase from the log (bets only in an open window), and the engine's cash-outs.
  const phases = createRoundPhases({ kafka, config, logger, registry });
  await phases.start();
  const engine = createEngineClient(config.api.engineUrl, await loadTokenSecret(config.auth));
  // Free bets whose bet is rejected go back to their grant (access/free-bet-returns.ts).
  const freeBetReturns = buildCheckpointedConsumer(freeBetReturnsSpec(), {
    config,
    kafka,
    sql: db,
    logger,
    groupId: config.api.freeBetGroup,
    maxWaitTimeInMs: 500,
    commitOffsets: true,
    lagName: 'api-free-bet-returns',
    options: { registry },
  });
  await freeBetReturns.start();
  // latest and history from memory once loaded (rounds/window-feed.ts); Postgres until then.
  const roundsWindow = new RoundsWindow();
  const listenSql = createSql(config, { max: 1 });
  const feed = startWindowFeed({
    window: roundsWindow,
    sql: db,
    listenSql,
    schema: config.db.schema,
    logger,
  });
  const app = await buildApi({
    config,
    sql: db,
    logger,
    registry,
    auth: { table, producer, lastUsed },
    play: { phases, engine },
    roundsWindow,
  });
  // TCP, and the proxy's Unix socket whose X-Forwarded-For is believed (listen.ts, trust.ts).
  const listeners = await listenApi(app, config);

  onShutdown(
    logger,
    async () => {
      await listeners.closeSocket();
      await app.close();
      await feed.stop();
      await listenSql.end({ timeout: 5 });
      await usage.stop();
      await phases.stop();
      await freeBetReturns.stop();
      await producer.disconnect();
      await table.close();
      await db.end({ timeout: 5 });
    },
    { timeoutMs: config.process.shutdownTimeoutMs },
  );
} catch (err) {
  logger.fatal({ err }, 'api failed to start');
  await sql.end({ timeout: 1 }).catch(() => {});
  process.exit(1);
}
