/**
 * Registers the reference operator wallet (services/operator-sandbox) as the platform's default
 * operator, so `npm start` has players betting through the real wallet-saga.
 * The work is services/operator-sandbox/register.ts (shared with the test stack): idempotent,
 * operator id `opr_sandbox`, the sandbox's own signing secret, and BOTS_OPERATOR_FILE
 * `{operator_id, api_token, base_url}` (mode 0600) for the bots and for request-access by hand.
 *
 * Usage: `tsx scripts/register-sandbox.ts` after the migrations. Exit 0, or 1 with the reason.
 */

import { createSql } from '../lib/db/pool.ts';
import { createLogger } from '../lib/logger.ts';
import { loadBotsConfig } from '../services/bots/config.ts';
import { loadSandboxConfig } from '../services/operator-sandbox/config.ts';
import { registerSandboxOperator } from '../services/operator-sandbox/register.ts';

async function main(): Promise<void> {
  // The sandbox's own settings, and the bots' BOTS_OPERATOR_FILE where the credentials go.
  const config = { ...loadSandboxConfig(), bots: loadBotsConfig().bots };
  const logger = createLogger('register-sandbox', config.process.logLevel);
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
