/**
 * Registers the reference operator wallet (this service) as the platform's default operator, so
 * `npm start` has players betting through the real wallet-saga. Shared by
 * scripts/register-sandbox.ts and the browser/e2e stack (tests/browser/stack.ts).
 *
 * Idempotent: the operator id is fixed (`opr_sandbox`); the signing secret is the sandbox's own
 * (secret.ts: SANDBOX_SIGNING_SECRET or its secret file); the bearer token in BOTS_OPERATOR_FILE
 * is kept while its SHA-256 still matches the row, else a new one is made. Writes
 * BOTS_OPERATOR_FILE `{operator_id, api_token, base_url}` (mode 0600) for the bots and for anyone
 * trying request-access by hand. Needs the platform's migrations (table `operators`) applied.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { newOperatorToken, sha256 } from '../../lib/auth/secrets.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { Logger } from '../../lib/logger.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../rules/retry/schedule.ts';

import type { SandboxConfig } from './config.ts';
import { resolveSigningSecret } from './secret.ts';
import { FORM_A_PATHS, SANDBOX_TIMEOUT_MS } from './wallet-endpoints.ts';

/** Id of the default operator. */
export const SANDBOX_OPERATOR_ID = 'opr_sandbox';

/** What the registration leaves in BOTS_OPERATOR_FILE. */
export interface SandboxOperator {
  readonly operator_id: string;
  /** Bearer of POST /games/request-access and the session endpoints (`op_` + 64 hex). */
  readonly api_token: string;
  /** Where the saga reaches the sandbox, `http://SANDBOX_HOST:SANDBOX_PORT`. */
  readonly base_url: string;
}

export interface RegisterOptions {
  /**
   * Callback timeout, ms (100..60000). Given: written on every registration; absent: the default
   * for a new row, and an existing row keeps what an admin set.
   */
  readonly timeoutMs?: number;
  /** Retry policy; written or kept as `timeoutMs`. */
  readonly retryPolicy?: RetryPolicy;
}

async function previousToken(file: string): Promise<string | undefined> {
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as { api_token?: unknown };
    return typeof saved.api_token === 'string' ? saved.api_token : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Upserts the sandbox's operator row and writes the operator file.
 * @param sql a pool on the platform's schema (search_path), migrations applied.
 * @throws ConfigError when the sandbox's secret file is malformed; postgres or fs errors.
 */
export async function registerSandboxOperator(
  sql: Sql,
  /** The sandbox's settings, and the bots' operator file (BOTS_OPERATOR_FILE) the credentials go to. */
  config: Pick<SandboxConfig, 'sandbox'> & { readonly bots: { readonly operatorFile: string } },
  logger?: Logger,
  options: RegisterOptions = {},
): Promise<SandboxOperator> {
  const secret = await resolveSigningSecret(config.sandbox, logger);
  const baseUrl = `http://${config.sandbox.host}:${config.sandbox.port}`;
  const timeoutMs = options.timeoutMs ?? SANDBOX_TIMEOUT_MS;
  // The saga's published default schedule (retry-policy.ts).
  const policy = options.retryPolicy ?? DEFAULT_RETRY_POLICY;
  const [row] = await sql<{ token_hash: string }[]>`
    select token_hash from operators where operator_id = ${SANDBOX_OPERATOR_ID}`;
  const saved = await previousToken(config.bots.operatorFile);
  const token = saved && row && sha256(saved) === row.token_hash ? saved : newOperatorToken();
  await sql`
    insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
                           balance_path, rollback_path, signing_secret, timeout_ms, retry_policy)
    values (${SANDBOX_OPERATOR_ID}, 'Operator sandbox', ${sha256(token)}, 'A', ${baseUrl}, ${FORM_A_PATHS.bet},
            ${FORM_A_PATHS.win}, ${FORM_A_PATHS.balance}, ${FORM_A_PATHS.rollback}, ${secret}, ${timeoutMs},
            ${sql.json({ ...policy })})
    on conflict (operator_id) do update set
      token_hash = excluded.token_hash, base_url = excluded.base_url,
      signing_secret = excluded.signing_secret, disabled_at = null,
      timeout_ms = case when ${options.timeoutMs !== undefined} then excluded.timeout_ms
                        else operators.timeout_ms end,
      retry_policy = case when ${options.retryPolicy !== undefined} then excluded.retry_policy
                          else operators.retry_policy end`;
  const operator: SandboxOperator = { operator_id: SANDBOX_OPERATOR_ID, api_token: token, base_url: baseUrl };
  await mkdir(dirname(config.bots.operatorFile), { recursive: true });
  await writeFile(config.bots.operatorFile, `${JSON.stringify(operator, null, 2)}\n`, { mode: 0o600 });
  logger?.info(
    { operator_id: SANDBOX_OPERATOR_ID, base_url: baseUrl, file: config.bots.operatorFile },
    'sandbox registered as the default operator',
  );
  return operator;
}
