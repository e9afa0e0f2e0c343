/**
 * Test support for the sandbox's integration tests (not a test file): a sandbox on the real
 * Postgres in a schema of its own (`t_sbx_<random>`), a random signing secret, signed requests
 * through app.inject(), and callback bodies shaped as the issue-5 contract.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { type Config, loadConfig } from '../../lib/config.ts';
import type { Sql } from '../../lib/db.ts';
import { createLogger } from '../../lib/logger.ts';
import { migrate } from '../../lib/migrate.ts';
import { buildOperatorSandbox, createSandboxSql, SANDBOX_MIGRATIONS_DIR } from './app.ts';

export interface Reply {
  readonly status: number;
  readonly body: string;
  /** The parsed body; undefined when it is not JSON. */
  readonly json: Record<string, unknown> | undefined;
}

export interface CallOptions {
  /** Signing: 'good' (default), 'none' (no webhook-* headers), or a secret to sign with instead. */
  readonly sign?: 'good' | 'none' | string;
  /** Send this text instead of JSON.stringify(body); the signature covers it. */
  readonly raw?: string;
  /** webhook-timestamp to sign with (default now). */
  readonly at?: Date;
}

export interface TestSandbox {
  readonly app: FastifyInstance;
  readonly sql: Sql;
  readonly config: Config;
  readonly secret: string;
  /** Signs and injects a callback. */
  call(method: 'GET' | 'POST', url: string, body: unknown, options?: CallOptions): Promise<Reply>;
  /** Signed headers for `payload` (for requests over a real socket). */
  signedHeaders(payload: string): Record<string, string>;
  /** Balance in minor units, or null for an account never seen. */
  balance(userId: string, currency?: string): Promise<number | null>;
  /** Rows in the transactions table. */
  txCount(): Promise<number>;
  close(): Promise<void>;
}

function toReply(status: number, body: string): Reply {
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status, body, json };
}

/** The `error.message` of a refusal, or '' when the body has none. */
export function errorMessage(r: Reply): string {
  const e = r.json?.error as { message?: unknown } | undefined;
  return typeof e?.message === 'string' ? e.message : '';
}

/** Starts a sandbox on a fresh schema; `overrides` are lib/config.ts settings. */
export async function startTestSandbox(
  overrides: Record<string, string | number> = {},
  options: { random?: () => number } = {},
): Promise<TestSandbox> {
  const schema = `t_sbx_${randomBytes(4).toString('hex')}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const config = loadConfig(process.env, {
    SANDBOX_DB_SCHEMA: schema,
    SANDBOX_SIGNING_SECRET: secret,
    LOG_LEVEL: 'silent',
    ...overrides,
  });
  const sql = createSandboxSql(config, { max: 12 });
  await migrate(sql, schema, SANDBOX_MIGRATIONS_DIR);
  const app = await buildOperatorSandbox({
    config,
    sql,
    logger: createLogger('sandbox-test', config.logLevel),
    ...(options.random ? { random: options.random } : {}),
  });
  const headersFor = (payload: string, key: string, at: Date): Record<string, string> => {
    const id = `test-${randomUUID()}`;
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign(id, at, payload),
    };
  };
  return {
    app,
    sql,
    config,
    secret,
    async call(method, url, body, o = {}) {
      const payload = o.raw ?? JSON.stringify(body);
      const sign = o.sign ?? 'good';
      const headers =
        sign === 'none'
          ? { 'content-type': 'application/json' }
          : headersFor(payload, sign === 'good' ? secret : sign, o.at ?? new Date());
      const res = await app.inject({ method, url, headers, payload });
      return toReply(res.statusCode, res.body);
    },
    signedHeaders: (payload) => headersFor(payload, secret, new Date()),
    async balance(userId, currency = 'USD') {
      const [row] =
        await sql`select balance_minor from accounts where user_id = ${userId} and currency = ${currency}`;
      return row ? Number(row.balance_minor) : null;
    },
    async txCount() {
      const [row] = await sql`select count(*)::int as n from transactions`;
      return Number(row?.n);
    },
    async close() {
      await app.close();
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end({ timeout: 5 });
    },
  };
}

const base = (user: string) => ({
  user_id: user,
  currency: 'USD',
  provider: 'casino-platform',
  game: 'crash',
  round_id: '1000000000042',
  mode: 'default',
  count_register: 1,
  session_token: 'sess-1',
});

/** Register Bet (form A POST /wallet/bet) body; amount in major units. */
export const betBody = (id: number, amount: number, user = 'u1', over: Record<string, unknown> = {}) => ({
  ...base(user),
  amount,
  provider_tx_id: id,
  action: 'bet',
  bonus_code: null,
  extra_data: null,
  ...over,
});

/** Register Win (form A POST /wallet/win) body. */
export const winABody = (id: number, betId: number, amount: number, user = 'u1') => ({
  ...base(user),
  amount,
  provider_tx_id: id,
  linked_tx_id: betId,
  action: 'win',
  agreggator: 'casino-platform',
  bonus_code: null,
});

/** Register Earnings (form B GET /webhooks/platform/rewards) body: string id, no linked_tx_id. */
export const rewardsBody = (id: number, amount: number, user = 'u1', over: Record<string, unknown> = {}) => ({
  ...base(user),
  amount,
  provider_tx_id: String(id),
  action: 'win',
  ...over,
});

/** Rollback body: form A (POST /wallet/rollback) integer ids, form B (GET) string ids. */
export const rollbackBody = (form: 'A' | 'B', id: number, betId: number, amount: number, user = 'u1') => ({
  ...base(user),
  amount,
  provider_tx_id: form === 'A' ? id : String(id),
  linked_tx_id: form === 'A' ? betId : String(betId),
  action: 'rollback',
});

/** Balance (POST /wallet/balance) body. */
export const balanceBody = (user = 'u1', currency = 'USD') => ({
  user_id: user,
  currency,
  session_token: 'sess-1',
});
