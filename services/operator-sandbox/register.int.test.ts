/**
 * registerSandboxOperator (register.ts, used by scripts/register-sandbox.ts and the test stack) on
 * real Postgres: the operator row and file, idempotence (the token is kept while it matches),
 * and the timeout and retry policy written only when given.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../lib/auth/secrets.ts';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { type Config, loadConfig } from '../../tests/support/config.ts';
import { registerSandboxOperator, SANDBOX_OPERATOR_ID } from './register.ts';

const schema = `t_reg_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'register-sandbox-'));
const secret = `whsec_${randomBytes(32).toString('base64')}`;
let config: Config;
let sql: Sql;

const row = async () =>
  (
    await sql<
      {
        token_hash: string;
        base_url: string;
        signing_secret: string;
        timeout_ms: number;
        retry_policy: unknown;
      }[]
    >`
      select token_hash, base_url, signing_secret, timeout_ms, retry_policy from operators
      where operator_id = ${SANDBOX_OPERATOR_ID}`
  )[0];

beforeAll(async () => {
  config = loadConfig(process.env, {
    DATABASE_SCHEMA: schema,
    SANDBOX_SIGNING_SECRET: secret,
    SANDBOX_PORT: 18090,
    BOTS_OPERATOR_FILE: join(dir, 'sub', 'operator.json'),
  });
  sql = createSql(config, { max: 2 });
  await migrate(sql, schema);
});
afterAll(async () => {
  await sql?.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql?.end();
  rmSync(dir, { recursive: true, force: true });
});

describe('registerSandboxOperator', () => {
  it('creates the row and a 0600 operator file whose token matches the stored hash', async () => {
    const op = await registerSandboxOperator(sql, config);
    expect(op).toEqual({
      operator_id: 'opr_sandbox',
      api_token: expect.stringMatching(/^op_[0-9a-f]{64}$/),
      base_url: 'http://127.0.0.1:18090',
    });
    expect(await row()).toMatchObject({
      token_hash: sha256(op.api_token),
      base_url: 'http://127.0.0.1:18090',
      signing_secret: secret,
      timeout_ms: 10_000,
      // The published schedule (rules/retry/schedule.ts).
      retry_policy: {
        delaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
        jitter: 0.1,
      },
    });
    expect(JSON.parse(readFileSync(config.bots.operatorFile, 'utf8'))).toEqual(op);
    expect(statSync(config.bots.operatorFile).mode & 0o777).toBe(0o600);
  });

  it('keeps the token on a second run, and an admin’s timeout and policy unless told otherwise', async () => {
    const first = JSON.parse(readFileSync(config.bots.operatorFile, 'utf8')) as { api_token: string };
    await sql`update operators set timeout_ms = 2500, retry_policy = ${sql.json({ retries: 3 })}
              where operator_id = ${SANDBOX_OPERATOR_ID}`;
    const again = await registerSandboxOperator(sql, config);
    expect(again.api_token).toBe(first.api_token);
    expect(await row()).toMatchObject({ timeout_ms: 2500, retry_policy: { retries: 3 } });
    const policy = { retries: 2, minTimeoutMs: 50, maxTimeoutMs: 200, factor: 2 };
    await registerSandboxOperator(sql, config, undefined, { timeoutMs: 300, retryPolicy: policy });
    expect(await row()).toMatchObject({ timeout_ms: 300, retry_policy: policy });
  });

  it('makes a new token when the file no longer matches the row', async () => {
    await sql`update operators set token_hash = 'stale' where operator_id = ${SANDBOX_OPERATOR_ID}`;
    const before = JSON.parse(readFileSync(config.bots.operatorFile, 'utf8')) as { api_token: string };
    const op = await registerSandboxOperator(sql, config);
    expect(op.api_token).not.toBe(before.api_token);
    expect((await row())?.token_hash).toBe(sha256(op.api_token));
  });
});
