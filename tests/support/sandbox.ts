/**
 * Test support for the sandbox's integration tests (not a test file): a sandbox on the real
 * Postgres in a schema of its own (`t_sbx_<random>`), a random signing secret, signed requests
 * through app.inject(), and callback bodies built by the wallet-saga's own builder (bodies.ts), so
 * the sandbox is tested against exactly what the platform sends.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { migrate } from '../../lib/db/migrate.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { signHeaders } from '../../lib/http/callback-client.ts';
import type { BetContext } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../rules/retry/schedule.ts';
import { answerTable } from '../../rules/wallet/answers.ts';
import { buildRequest, type CallbackKind, type OperatorConfig } from '../../rules/wallet/bodies.ts';
import {
  buildOperatorSandbox,
  createSandboxSql,
  SANDBOX_MIGRATIONS_DIR,
} from '../../services/operator-sandbox/app.ts';
import { FORM_A_PATHS } from '../../services/operator-sandbox/wallet-endpoints.ts';
import { type Config, loadConfig } from './config.ts';

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
  /** PUT of JSON `body` on an admin route (/_sandbox/…): status and parsed answer. */
  put(url: string, body: unknown): Promise<Reply>;
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

/** Starts a sandbox on a fresh schema; `overrides` are settings (environment variable names) of tests/support/config.ts. */
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
    logger: createLogger('sandbox-test', config.process.logLevel),
    ...(options.random ? { random: options.random } : {}),
  });
  const headersFor = (payload: string, key: string, at: Date): Record<string, string> => ({
    'content-type': 'application/json',
    ...signHeaders(`test-${randomUUID()}`, payload, key, at.getTime()),
  });
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
    async put(url, body) {
      const headers = { 'content-type': 'application/json' };
      const res = await app.inject({ method: 'PUT', url, headers, payload: JSON.stringify(body) });
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

/** The operator the callback bodies are built for: only `form` shapes a body. */
const operatorOf = (form: 'A' | 'B'): OperatorConfig => ({
  operatorId: 'opr_test',
  form,
  baseUrl: 'http://sandbox.test',
  betPath: FORM_A_PATHS.bet,
  winPath: FORM_A_PATHS.win,
  rollbackPath: FORM_A_PATHS.rollback,
  signingSecret: '',
  timeoutMs: 1_000,
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  answers: answerTable('seed'),
  roundClose: 'zero-win',
  roundEndPath: null,
  amountFormat: 'string',
});

/**
 * The body the wallet-saga sends (rules/wallet/bodies.ts buildRequest) for one callback of
 * user `user`'s default-mode bet on crash round 1000000000042, with `amount` (major units) exactly
 * as given, then `over`.
 */
function sagaBody(
  form: 'A' | 'B',
  kind: CallbackKind,
  ids: { txId: number; betTxId: number },
  amount: number,
  user: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  const bet: BetContext = {
    session_id: '00000000-0000-4000-8000-000000000001',
    operator_id: 'opr_test',
    user_id: user,
    currency: 'USD',
    game: 'crash',
    round_id: 1_000_000_000_042,
    amount_minor: Math.round(amount * 100),
    mode: 'default',
    bonus_code: null,
    free_bet_id: null,
    count_register: 1,
    demo: false,
  };
  const job = { kind, ...ids, amountMinor: bet.amount_minor, bet };
  const { body } = buildRequest(job, operatorOf(form), { sessionToken: 'sess-1', extraData: null });
  return { ...body, amount, ...over };
}

/** Register Bet (form A POST /wallet/bet) body; amount in major units. */
export const betBody = (id: number, amount: number, user = 'u1', over: Record<string, unknown> = {}) =>
  sagaBody('A', 'bet', { txId: id, betTxId: id }, amount, user, over);

/** Register Win (form A POST /wallet/win) body. */
export const winABody = (id: number, betId: number, amount: number, user = 'u1') =>
  sagaBody('A', 'win', { txId: id, betTxId: betId }, amount, user);

/** Register Earnings (form B GET /webhooks/platform/rewards) body: string id, no linked_tx_id. */
export const rewardsBody = (id: number, amount: number, user = 'u1', over: Record<string, unknown> = {}) =>
  sagaBody('B', 'win', { txId: id, betTxId: id }, amount, user, over);

/** Rollback body: form A (POST /wallet/rollback) integer ids, form B (GET) string ids. */
export const rollbackBody = (form: 'A' | 'B', id: number, betId: number, amount: number, user = 'u1') =>
  sagaBody(form, 'rollback', { txId: id, betTxId: betId }, amount, user);

/** Balance (POST /wallet/balance) body. */
export const balanceBody = (user = 'u1', currency = 'USD') => ({
  user_id: user,
  currency,
  session_token: 'sess-1',
});

/** What a bet looks like in `sagaRequest`. */
export interface SagaBet {
  /** The bet's provider_tx_id: its win (or round close) is + 1, its rollback + 2. */
  readonly betTxId: number;
  readonly user: string;
  /** Minor units: the stake (0 for a free bet) of a bet and its rollback, a win's payout. */
  readonly amountMinor: number;
  readonly currency?: string;
  readonly round?: number;
  /** A free bet: mode free, bonus_code FREE10 and free_bet_id `fb-<betTxId>`. */
  readonly free?: boolean;
}

/**
 * The exact body the wallet-saga sends (buildRequest) for `kind` of bet `b` in `form`: a real-money
 * bet, or a free bet registered as a bet that moves no money, amounts as decimal strings.
 */
export function sagaRequest(form: 'A' | 'B', kind: CallbackKind, b: SagaBet): Record<string, unknown> {
  const free = b.free === true;
  const bet: BetContext = {
    session_id: '00000000-0000-4000-8000-000000000017',
    operator_id: 'opr_test',
    user_id: b.user,
    currency: b.currency ?? 'USD',
    game: 'crash',
    round_id: b.round ?? 1_000_000_000_017,
    amount_minor: b.amountMinor,
    mode: free ? 'free' : 'default',
    bonus_code: free ? 'FREE10' : null,
    free_bet_id: free ? `fb-${b.betTxId}` : null,
    count_register: 1,
    demo: false,
  };
  const txId = b.betTxId + (kind === 'bet' ? 0 : kind === 'rollback' ? 2 : 1);
  const job = { kind, txId, betTxId: b.betTxId, amountMinor: b.amountMinor, bet };
  return buildRequest(job, operatorOf(form), { sessionToken: 'sess-1', extraData: null }).body;
}
