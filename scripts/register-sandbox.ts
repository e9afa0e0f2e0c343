/**
 * Registers the reference operator wallet (services/operator-sandbox) as the platform's default
 * operator, so `npm start` has players betting through the real wallet-saga (issue 5 item 6).
 * Idempotent: the operator id is fixed (`opr_sandbox`); the signing secret is the sandbox's own
 * (services/operator-sandbox/secret.ts: SANDBOX_SIGNING_SECRET or its secret file), and the bearer
 * token in BOTS_OPERATOR_FILE is kept while its SHA-256 still matches the row, else a new one is made.
 * Writes BOTS_OPERATOR_FILE `{operator_id, api_token, base_url}` (mode 0600) for the bots and for
 * anyone trying request-access by hand.
 *
 * Usage: `tsx scripts/register-sandbox.ts` after the migrations. Exit 0, or 1 with the reason.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { loadConfig } from '../lib/config.ts';
import { createSql } from '../lib/db.ts';
import { createLogger } from '../lib/logger.ts';
import { newOperatorToken, sha256 } from '../services/api/access/secrets.ts';
import { resolveSigningSecret } from '../services/operator-sandbox/secret.ts';

/** Id of the default operator. */
export const SANDBOX_OPERATOR_ID = 'opr_sandbox';

async function previousToken(file: string): Promise<string | undefined> {
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as { api_token?: unknown };
    return typeof saved.api_token === 'string' ? saved.api_token : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('register-sandbox', config.logLevel);
  const sql = createSql(config, { max: 1 });
  try {
    const secret = await resolveSigningSecret(config.sandbox, logger);
    const baseUrl = `http://${config.sandbox.host}:${config.sandbox.port}`;
    const [row] = await sql<{ token_hash: string }[]>`
      select token_hash from operators where operator_id = ${SANDBOX_OPERATOR_ID}`;
    const saved = await previousToken(config.bots.operatorFile);
    const token = saved && row && sha256(saved) === row.token_hash ? saved : newOperatorToken();
    await sql`
      insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
                             balance_path, rollback_path, signing_secret, timeout_ms, retry_policy)
      values (${SANDBOX_OPERATOR_ID}, 'Operator sandbox', ${sha256(token)}, 'A', ${baseUrl}, '/wallet/bet',
              '/wallet/win', '/wallet/balance', '/wallet/rollback', ${secret}, 10000,
              ${sql.json({ retries: 10, minTimeoutMs: 500, maxTimeoutMs: 60000, factor: 2 })})
      on conflict (operator_id) do update set
        token_hash = excluded.token_hash, base_url = excluded.base_url,
        signing_secret = excluded.signing_secret, disabled_at = null`;
    await mkdir(dirname(config.bots.operatorFile), { recursive: true });
    await writeFile(
      config.bots.operatorFile,
      `${JSON.stringify({ operator_id: SANDBOX_OPERATOR_ID, api_token: token, base_url: baseUrl }, null, 2)}\n`,
      { mode: 0o600 },
    );
    logger.info(
      { operator_id: SANDBOX_OPERATOR_ID, base_url: baseUrl, file: config.bots.operatorFile },
      'sandbox registered as the default operator',
    );
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().catch((err: unknown) => {
  console.error(`register-sandbox failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
