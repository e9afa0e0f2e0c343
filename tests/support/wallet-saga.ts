/**
 * Test support for the wallet saga's integration and e2e tests (not a test file): a small real
 * HTTP operator (node:http on 127.0.0.1, port 0) with an in-memory ledger, idempotent on
 * provider_tx_id and checking Standard Webhooks signatures, whose faults a test scripts per user;
 * and an isolated environment (own topics, schema, groups) with an operator row and sessions.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { Webhook } from 'standardwebhooks';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import {
  appendWalletEvents,
  type BetContext,
  decodeWalletEvent,
  type WalletEvent,
  walletKey,
} from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import { buildWalletSaga, type WalletSaga } from '../../services/wallet-saga/saga.ts';
import { type Config, loadConfig } from './config.ts';
import { waitFor } from './poll.ts';

export type Kind = 'bet' | 'win' | 'rollback' | 'balance';

/** The test operator's currencies: ISO 4217 and the default crypto precisions. */
const currencies = currencyTable();
/**
 * What the operator does with one request (before its ledger logic): nothing special, a 500
 * without booking, a malformed 200 after booking, a delay, or a scripted answer sent instead of
 * its own, after booking the request (`commit`) or without.
 */
export type Fault =
  | 'none'
  | 'error500'
  | 'malformedAfterCommit'
  | { readonly delayMs: number }
  | { readonly reply: { readonly status: number; readonly body: unknown }; readonly commit: boolean };

export interface SeenRequest {
  readonly kind: Kind;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
  readonly at: number;
}

const PATHS: Record<string, Kind> = {
  'POST /wallet/bet': 'bet',
  'POST /wallet/win': 'win',
  'POST /wallet/rollback': 'rollback',
  'POST /wallet/balance': 'balance',
  'GET /webhooks/platform/rewards': 'win',
  'GET /webhooks/platform/rollback': 'rollback',
};

export interface TestOperator {
  readonly url: string;
  readonly secret: string;
  readonly requests: SeenRequest[];
  /** Money movements: one entry per debit/credit/refund actually applied. */
  readonly movements: Array<{ kind: Kind; txId: string; user: string; amountMinor: number }>;
  /** Sets the fault for a user's requests of `kind`; `fn` gets the attempt number (1-based) of that tx id. */
  fault(user: string, kind: Kind, fn: (attempt: number) => Fault): void;
  balance(user: string): number;
  /**
   * Answers in the status-in-body form (Hub88's) from now on: every answer of its ledger is an HTTP
   * 200 whose `status` is `ok` on success, or the Hub88 status of its refusal (null: back to HTTP
   * statuses). Scripted replies are sent as given.
   */
  okStatus(ok: string | null): void;
  close(): Promise<void>;
}

/** The Hub88 status of each of the test operator's refusal codes. */
const HUB88: Record<string, string> = {
  INSUFFICIENT_FUNDS: 'RS_ERROR_NOT_ENOUGH_MONEY',
  BET_NOT_FOUND: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
};

/** Starts the operator; every user begins with `startMinor`; it verifies signatures with `secret` (a new one by default). */
export async function startTestOperator(
  startMinor = 100_000,
  secret = `whsec_${randomBytes(24).toString('base64')}`,
): Promise<TestOperator> {
  const wh = new Webhook(secret);
  const requests: SeenRequest[] = [];
  const movements: TestOperator['movements'] = [];
  const balances = new Map<string, number>();
  const answers = new Map<string, { body: string; status: number; answer: unknown }>();
  const rolledBack = new Set<string>();
  /** The bet tx of each player's round (`user:round`), for form B's rollbacks. */
  const betOfRound = new Map<string, string>();
  /** Rounds (`user:round`) whose form B rollback came before their bet: a late bet is refused. */
  const rolledBackRounds = new Set<string>();
  const faults = new Map<string, (attempt: number) => Fault>();
  const attemptsByTx = new Map<string, number>();
  const bal = (u: string) => balances.get(u) ?? startMinor;
  let inBody: string | null = null;
  /** An answer of the ledger in the current form. */
  const shaped = (r: { status: number; answer: unknown }): { status: number; answer: unknown } => {
    if (inBody === null) return r;
    if (r.status === 200) return { status: 200, answer: { status: inBody, ...(r.answer as object) } };
    const code = (r.answer as { error?: { code?: string } }).error?.code ?? 'RS_ERROR_UNKNOWN';
    return { status: 200, answer: { status: HUB88[code] ?? code } };
  };

  const ledger = (kind: Kind, b: Record<string, unknown>): { status: number; answer: unknown } => {
    const user = String(b.user_id);
    const tx = String(b.provider_tx_id);
    const currency = String(b.currency);
    const amount =
      b.amount === undefined ? 0 : (currencies.parseAmount(b.amount as number | string, currency) ?? 0);
    const old = bal(user);
    const ok = (next: number) => {
      balances.set(user, next);
      const answer = {
        operator_tx_id: `op-${tx}`,
        old_balance: currencies.formatMinor(old, currency),
        new_balance: currencies.formatMinor(next, currency),
        user_id: user,
        currency: b.currency,
        provider: b.provider,
        provider_tx_id: b.provider_tx_id,
      };
      return { status: 200, answer };
    };
    const refuse = (status: number, code: string) => ({ status, answer: { error: { code, message: code } } });
    if (kind === 'balance')
      return {
        status: 200,
        answer: {
          user_id: user,
          currency,
          balance: currencies.formatMinor(old, currency),
          platform_session_token: b.session_token,
        },
      };
    if (kind === 'bet') {
      const round = `${user}:${String(b.round_id)}`;
      betOfRound.set(round, tx);
      if (rolledBack.has(tx) || rolledBackRounds.has(round)) return refuse(409, 'BET_ROLLED_BACK');
      if (old < amount) return refuse(402, 'INSUFFICIENT_FUNDS');
      movements.push({ kind, txId: tx, user, amountMinor: -amount });
      return ok(old - amount);
    }
    if (kind === 'win') {
      if (!answers.has(String(Number(tx) - 1))) return refuse(409, 'BET_NOT_FOUND');
      movements.push({ kind, txId: tx, user, amountMinor: amount });
      return ok(old + amount);
    }
    // Form B's rollback names no bet (docs/contract.md "Operator callbacks": Register Earnings'
    // fields): the player's bet of the round; one that comes before its bet (the bet answered late,
    // after the platform gave up on it) refuses that bet when it arrives, as a wallet must.
    const round = `${user}:${String(b.round_id)}`;
    const betId = b.linked_tx_id !== undefined ? String(b.linked_tx_id) : (betOfRound.get(round) ?? '');
    if (b.linked_tx_id === undefined && !betOfRound.has(round)) rolledBackRounds.add(round);
    rolledBack.add(betId);
    const debited = answers.get(betId)?.status === 200;
    if (!debited) return ok(old);
    movements.push({ kind, txId: tx, user, amountMinor: amount });
    return ok(old + amount);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const send = (status: number, body: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      const kind = PATHS[`${req.method} ${(req.url ?? '').split('?')[0]}`];
      if (!kind) return send(404, { error: { code: 'NOT_FOUND', message: 'route' } });
      try {
        wh.verify(raw, req.headers as Record<string, string>);
      } catch {
        return send(401, { error: { code: 'INVALID_SIGNATURE', message: 'bad signature' } });
      }
      const body = JSON.parse(raw) as Record<string, unknown>;
      // A body without the fields of a callback (e.g. a readiness probe's) books nothing: 400.
      const fields =
        kind === 'balance' ? ['user_id', 'currency'] : ['user_id', 'currency', 'provider_tx_id', 'amount'];
      if (fields.some((f) => body[f] === undefined))
        return send(400, { error: { code: 'BAD_REQUEST', message: 'not a callback body' } });
      requests.push({
        kind,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
      });
      const tx = String(body.provider_tx_id);
      const attempt = (attemptsByTx.get(tx) ?? 0) + 1;
      attemptsByTx.set(tx, attempt);
      const fault = faults.get(`${body.user_id}:${kind}`)?.(attempt) ?? 'none';
      if (fault === 'error500') return send(500, { error: { code: 'INTERNAL', message: 'injected' } });
      if (typeof fault === 'object' && 'delayMs' in fault)
        await new Promise((r) => setTimeout(r, fault.delayMs));
      if (typeof fault === 'object' && 'reply' in fault) {
        if (fault.commit && !answers.has(tx)) {
          const booked = ledger(kind, body);
          answers.set(tx, { body: raw, ...booked });
        }
        return send(fault.reply.status, fault.reply.body);
      }
      const first = kind === 'balance' ? undefined : answers.get(tx);
      let result: { status: number; answer: unknown };
      if (first)
        result =
          first.body === raw
            ? first
            : { status: 409, answer: { error: { code: 'IDEMPOTENCY_CONFLICT', message: 'x' } } };
      else {
        result = ledger(kind, body);
        if (kind !== 'balance' && (result.status === 200 || result.status === 402 || result.status === 409))
          answers.set(tx, { body: raw, ...result });
      }
      if (fault === 'malformedAfterCommit') return send(200, '{"operator_tx_id": ');
      const out = shaped(result);
      send(out.status, out.answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    secret,
    requests,
    movements,
    fault: (user, kind, fn) => faults.set(`${user}:${kind}`, fn),
    balance: bal,
    okStatus: (ok) => {
      inBody = ok;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An isolated saga environment. */
export interface SagaEnv {
  readonly config: Config;
  /** Settings for a child process with the same environment. */
  readonly env: Record<string, string>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly producer: Producer;
  readonly operatorId: string;
  /** Every event seen on wallet-transactions, in arrival order. */
  readonly events: WalletEvent[];
  /** Records seen on the dead-letter topic. */
  readonly parked: Array<{ headers: Record<string, string>; event: WalletEvent }>;
  /** A session row for `user`; returns the bet context to use. */
  session(user: string, partial?: Partial<BetContext>): Promise<BetContext>;
  append(bet: BetContext, events: WalletEvent[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates topics (1 partition, so every player shares it), a migrated schema, an operator row
 * pointing at `op` (the test operator, or any wallet with a URL and a signing secret, such as the
 * operator sandbox) with `timeoutMs` and `retryPolicy`, and a collector of both topics.
 */
export async function startSagaEnv(
  op: Pick<TestOperator, 'url' | 'secret'>,
  options: {
    timeoutMs?: number;
    retryPolicy?: object;
    form?: 'A' | 'B';
    maxInFlight?: number;
    /** The operator's answer_table (rules/wallet/answers.ts), default `seed`. */
    answerTable?: unknown;
    /** Partitions of the topics (default 1: every player shares one). */
    partitions?: number;
  } = {},
): Promise<SagaEnv> {
  const id = randomBytes(4).toString('hex');
  const env = {
    TOPIC_NAMESPACE: `t-saga-${id}-`,
    TOPIC_PARTITIONS: String(options.partitions ?? 1),
    DATABASE_SCHEMA: `t_saga_${id}`,
    WALLET_SAGA_GROUP: `wallet-saga-${id}`,
    WALLET_SAGA_MAX_IN_FLIGHT: String(options.maxInFlight ?? 64),
    WALLET_SAGA_CACHE_MS: '0',
    LOG_LEVEL: 'silent',
  };
  const config = loadConfig(process.env, env);
  const logger = createLogger('saga-test', 'silent');
  const kafka = createKafka(config, `saga-test-${id}`, logger);
  const sql = createSql(config, { max: 3 });
  await migrate(sql, config.db.schema);
  const operatorId = `op-${id}`;
  await sql`
    insert into operators (operator_id, name, token_hash, callback_form, base_url, bet_path, win_path,
      balance_path, rollback_path, signing_secret, timeout_ms, retry_policy, answer_table)
    values (${operatorId}, 'test operator', ${`hash-${id}`}, ${options.form ?? 'A'}, ${op.url}, '/wallet/bet',
      '/wallet/win', '/wallet/balance', '/wallet/rollback', ${op.secret}, ${options.timeoutMs ?? 2000},
      ${sql.json((options.retryPolicy ?? { retries: 3, minTimeoutMs: 20, maxTimeoutMs: 80, factor: 2 }) as never)},
      ${sql.json((options.answerTable ?? 'seed') as never)})`;
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['walletTransactions', 'walletDeadLetter']);
  const producer = kafka.producer();
  await producer.connect();
  const events: WalletEvent[] = [];
  const parked: SagaEnv['parked'] = [];
  const collector: Consumer = kafka.consumer({ groupId: `collector-${id}`, maxWaitTimeInMs: 50 });
  await collector.connect();
  await collector.subscribe({
    topics: [topicName(config, 'walletTransactions'), topicName(config, 'walletDeadLetter')],
    fromBeginning: true,
  });
  await collector.run({
    eachMessage: async ({ topic, message }) => {
      const event = decodeWalletEvent(message.value);
      if (topic === topicName(config, 'walletTransactions')) events.push(event);
      else {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        parked.push({ headers, event });
      }
    },
  });
  return {
    config,
    env,
    kafka,
    sql,
    producer,
    operatorId,
    events,
    parked,
    async session(user, partial = {}) {
      const sessionId = randomUUID();
      await sql`
        insert into access_sessions (session_id, operator_id, game, user_id, username, currency, demo, demo_session,
          session_token, launch_hash, expires_at, created_at)
        values (${sessionId}, ${operatorId}, 'crash', ${user}, ${user}, 'EUR', false, false,
          ${`st-${sessionId}`}, ${`lh-${sessionId}`}, now() + interval '1 hour', now())`;
      return {
        session_id: sessionId,
        operator_id: operatorId,
        user_id: user,
        currency: 'EUR',
        game: 'crash',
        round_id: 1_000_000_000_001,
        amount_minor: 1000,
        mode: 'default',
        bonus_code: null,
        free_bet_id: null,
        count_register: 1,
        demo: false,
        ...partial,
      };
    },
    append: (bet, evs) => appendWalletEvents(producer, config, walletKey(bet), evs),
    async close() {
      await collector.disconnect();
      await producer.disconnect();
      await admin
        .deleteTopics({
          topics: [topicName(config, 'walletTransactions'), topicName(config, 'walletDeadLetter')],
        })
        .catch(() => {});
      // The replay ledger exists only once a dead-letter replay wrote to it: a call of its own.
      if ((await admin.listTopics()).includes(topicName(config, 'deadLetterReplays')))
        await admin.deleteTopics({ topics: [topicName(config, 'deadLetterReplays')] }).catch(() => {});
      await admin.disconnect();
      await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`);
      await sql.end({ timeout: 5 });
    },
  };
}

/** A BetPlaced of `bet` with provider_tx_id `txId`. */
/** What a test changes in the saga it builds over a SagaEnv. */
export interface SagaOptions {
  /** Settings of the saga's own section over the env's (lease, poll, breaker, concurrency, …). */
  readonly walletSaga?: Partial<Config['walletSaga']>;
  /** Settings of the kafka section over the env's (e.g. a short lag refresh). */
  readonly kafka?: Partial<Config['kafka']>;
  /** The saga's clock, Unix ms (default Date.now). */
  readonly now?: () => number;
  /** The retry jitter's source, uniform in [0, 1) (default Math.random). */
  readonly random?: () => number;
  /** Logger name; the level is TEST_LOG_LEVEL (silent by default). */
  readonly name?: string;
}

/** A wallet saga in process over `env` (its config, broker and database), not started. */
export function sagaOver(env: SagaEnv, o: SagaOptions = {}): WalletSaga {
  return buildWalletSaga({
    config: {
      ...env.config,
      kafka: { ...env.config.kafka, ...o.kafka },
      walletSaga: { ...env.config.walletSaga, ...o.walletSaga },
    },
    kafka: env.kafka,
    sql: env.sql,
    logger: createLogger(o.name ?? 'saga', (process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent'),
    ...(o.now ? { now: o.now } : {}),
    ...(o.random ? { random: o.random } : {}),
  });
}

/** Starts `saga` and waits until its consumer has joined its group. @throws after 30 s. */
export async function startedSaga(saga: WalletSaga): Promise<WalletSaga> {
  await saga.start();
  await waitFor('saga joined', () => (saga.ready() ? true : undefined), 30_000, 50);
  return saga;
}

export const betPlaced = (bet: BetContext, txId: number): WalletEvent => ({
  type: 'BetPlaced',
  value: {
    tx_id: txId,
    bet,
    selection: { 'casino.wallet.CrashBet': { auto_cashout: '2.00' } },
    placed_at: Date.now(),
  },
});

/** A won BetSettled of `bet` (payout `payoutMinor`, win id txId + 1). */
export const betWon = (bet: BetContext, txId: number, payoutMinor: number): WalletEvent => ({
  type: 'BetSettled',
  value: { tx_id: txId, bet, outcome: 'won', payout_minor: payoutMinor, win_tx_id: txId + 1, at: Date.now() },
});

/** A lost BetSettled of `bet`. */
export const betLost = (bet: BetContext, txId: number): WalletEvent => ({
  type: 'BetSettled',
  value: { tx_id: txId, bet, outcome: 'lost', payout_minor: 0, win_tx_id: null, at: Date.now() },
});

/** Events of `type` whose tx_id is `txId`. */
export function eventsOf(
  events: readonly WalletEvent[],
  type: WalletEvent['type'],
  txId: number,
): WalletEvent[] {
  return events.filter((e) => e.type === type && e.value.tx_id === txId);
}
