/**
 * Registers the reference operator wallet (services/operator-sandbox) as the platform's default
 * operator, so `npm start` has players betting through the real wallet-saga (issue 5 item 6).
 * The work is services/operator-sandbox/register.ts (shared with the test stack): idempotent,
 * operator id `opr_sandbox`, the sandbox's own signing secret, and BOTS_OPERATOR_FILE
 * `{operator_id, api_token, base_url}` (mode 0600) for the bots and for request-access by hand.
 *
 * Usage: `tsx scripts/register-sandbox.ts` after the migrations. Exit 0, or 1 with the reason.
 */
import { loadConfig } from '../lib/config.ts';
import { createSql } from '../lib/db/pool.ts';
import { createLogger } from '../lib/logger.ts';
import { registerSandboxOperator } from '../services/operator-sandbox/register.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('register-sandbox', config.logLevel);
  const sql = createSql(config, { max: 1 });
  try {
    await registerSandboxOperator(sql, config, logger);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().catch((err: unknown) => {
  console.error(`register-sandbox failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
