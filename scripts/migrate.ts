/**
 * Applies the pending SQL migrations (lib/db/migrations, lib/db/migrate.ts) to the configured
 * database and schema (DATABASE_URL, DATABASE_SCHEMA). Safe to run concurrently and repeatedly:
 * an advisory lock serialises runs and applied versions are skipped.
 *
 * Usage: `tsx scripts/migrate.ts`. Exit 0 on success, 1 with the reason on stderr.
 */
import { configLoader } from '../lib/config/core.ts';
import { dbSection, processSection } from '../lib/config/shared.ts';
import { migrate } from '../lib/db/migrate.ts';
import { createSql } from '../lib/db/pool.ts';
import { createLogger } from '../lib/logger.ts';

async function main(): Promise<void> {
  const config = configLoader([dbSection, processSection])();
  const logger = createLogger('migrate', config.process.logLevel);
  const sql = createSql(config, { max: 1 });
  try {
    const applied = await migrate(sql, config.db.schema);
    logger.info(
      { schema: config.db.schema, applied },
      applied.length ? 'migrations applied' : 'schema up to date',
    );
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().catch((err: unknown) => {
  console.error(`migrate failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
