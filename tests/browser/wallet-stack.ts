/**
 * The wallet part of the test stack (tests/browser/stack.ts, option `wallet`): the settings of the
 * operator sandbox, the settlement processor, the wallet saga and the bots inside the stack's
 * namespace and schema, the sandbox's registration as the operator, and what tests read back
 * (operator bearer, sandbox URL, read models, reconciliation with the sandbox ledger).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { newSigningSecret } from '../../lib/auth/secrets.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka, partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { decodeWalletEvent, type WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import type { RetryPolicy } from '../../rules/retry/schedule.ts';
import type { RoundClose } from '../../rules/wallet/bodies.ts';
import { ledgerMoney } from '../../services/operator-sandbox/money.ts';
import { type ReconcileReport, reconcile } from '../../services/operator-sandbox/reconcile.ts';
import { registerSandboxOperator } from '../../services/operator-sandbox/register.ts';
import { type Config, loadConfig } from '../support/config.ts';

/** How long the saga caches an operator row in the stack (WALLET_SAGA_CACHE_MS), ms. */
const OPERATOR_CACHE_MS = 200;

export interface WalletStack {
  /** The sandbox's operator id (`opr_sandbox`). */
  readonly operatorId: string;
  /** The operator's bearer for POST /games/request-access and the session endpoints. */
  readonly apiToken: string;
  /** The operator sandbox's origin (callbacks, /_sandbox/faults, /_sandbox/ledger). */
  readonly sandboxUrl: string;
  /** Schema of the sandbox ledger (dropped by the stack's stop()). */
  readonly sandboxSchema: string;
  /** Starting balance of every sandbox account, minor units. */
  /** A sandbox account's first balance in `currency`, minor units (SANDBOX_INITIAL_BALANCE in its precision). */
  readonly initialBalanceMinor: (currency: string) => number;
  /** A pool on the stack's read-model schema (wallet_transactions, wallet_balances, operators …). */
  readonly sql: Sql;
  /** `/ready` URLs of the wallet services (after a restart with startOne). */
  readonly readyUrls: Readonly<Record<'sandbox' | 'saga' | 'settlement', string>>;
  /** The sandbox ledger against the platform's read models (services/operator-sandbox/reconcile.ts). */
  reconcile(): Promise<ReconcileReport>;
  /** Every event of the stack's `wallet-transactions`, decoded, in offset order per partition. */
  walletEvents(): Promise<{ partition: number; offset: bigint; event: WalletEvent }[]>;
  /** Sum of the high-water marks of `wallet-transactions`: unchanged means nothing was appended. */
  walletEnd(): Promise<bigint>;
  /**
   * Changes the operator row's callback timeout (ms), retry policy, round close, form and/or answer
   * table, then waits until the
   * saga's operator cache has expired, so the next callback uses them.
   */
  setOperator(patch: {
    timeoutMs?: number;
    retryPolicy?: RetryPolicy;
    roundClose?: RoundClose;
    form?: 'A' | 'B';
    /** rules/wallet/answers.ts: a preset name or a preset with codes. */
    answerTable?: unknown;
  }): Promise<void>;
}

/** Ports and names the wallet services get in a stack. */
export interface WalletPorts {
  readonly sandbox: number;
  readonly saga: number;
  readonly settlement: number;
}

/**
 * Environment of the wallet services. `tmp` is a private directory for the operator file and
 * the (unused, SANDBOX_SIGNING_SECRET is set) secret file. Returns settings the caller's
 * `options.env` may override (`defaults`) and ones it may not (`fixed`).
 */
export function walletEnv(
  ns: string,
  schema: string,
  ports: WalletPorts,
  tmp: string,
): { defaults: Record<string, string>; fixed: Record<string, string> } {
  return {
    defaults: {
      WALLET_SAGA_CACHE_MS: String(OPERATOR_CACHE_MS),
      // The fault suite fails bets back to back on purpose; its breaker has a test of its own
      // (tests/integration/wallet-retries.int.test.ts), so here it only trips on a real outage.
      WALLET_SAGA_BREAKER_FAILURES: '1000',
      BOTS_PLAYERS: '0',
    },
    fixed: {
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: String(ports.sandbox),
      SANDBOX_DB_SCHEMA: `${schema}_sbx`,
      SANDBOX_SIGNING_SECRET: newSigningSecret(),
      SANDBOX_SECRET_FILE: `${tmp}/signing-secret`,
      BOTS_OPERATOR_FILE: `${tmp}/operator.json`,
      WALLET_SAGA_HTTP_PORT: String(ports.saga),
      WALLET_SAGA_GROUP: `${ns}wallet-saga`,
      SETTLEMENT_HTTP_PORT: String(ports.settlement),
      SETTLEMENT_GROUP: `${ns}settlement`,
    },
  };
}

/** Consumer groups the wallet services join (deleted by stop()). */
export function walletGroups(env: Readonly<Record<string, string>>): string[] {
  return [env.WALLET_SAGA_GROUP, env.SETTLEMENT_GROUP].filter((g): g is string => typeof g === 'string');
}

/**
 * Registers the sandbox as the operator (as scripts/register-sandbox.ts does) once the platform's
 * migrations are applied, and returns the handle tests use.
 * @throws postgres errors (e.g. the operators table is missing).
 */
export async function registerWallet(env: Readonly<Record<string, string>>): Promise<WalletStack> {
  const config: Config = loadConfig({ ...process.env, ...env });
  const money = ledgerMoney(currencyTable(config.money.crypto), config.sandbox.initialBalance);
  const sql = createSql(config, { max: 3 });
  const kafka = createKafka(config, 'wallet-e2e', createLogger('test', 'warn'));
  const topic = topicName(config, 'walletTransactions');
  const local = (port: number) => `http://127.0.0.1:${port}/ready`;
  try {
    const op = await registerSandboxOperator(sql, config);
    const stack: WalletStack = {
      operatorId: op.operator_id,
      apiToken: op.api_token,
      sandboxUrl: op.base_url,
      sandboxSchema: config.sandbox.dbSchema,
      initialBalanceMinor: money.initialMinor,
      sql,
      readyUrls: {
        sandbox: local(config.sandbox.port),
        saga: local(config.walletSaga.httpPort),
        settlement: local(config.settlement.httpPort),
      },
      reconcile: () =>
        reconcile(sql, {
          platformSchema: config.db.schema,
          sandboxSchema: config.sandbox.dbSchema,
          operatorId: op.operator_id,
          initialBalanceMinor: money.initialMinor,
        }),
      async walletEvents() {
        const offs = await partitionOffsets(kafka, topic);
        const out: { partition: number; offset: bigint; event: WalletEvent }[] = [];
        await readRange(kafka, topic, new Map([...offs].map(([p, o]) => [p, o.low])), (r) => {
          out.push({
            partition: r.partition,
            offset: BigInt(r.offset),
            event: decodeWalletEvent(r.message.value),
          });
        });
        return out.sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset));
      },
      async walletEnd() {
        const offs = await partitionOffsets(kafka, topic);
        return [...offs.values()].reduce((n, o) => n + o.high, 0n);
      },
      async setOperator(patch) {
        if (patch.timeoutMs !== undefined)
          await sql`update operators set timeout_ms = ${patch.timeoutMs} where operator_id = ${op.operator_id}`;
        if (patch.retryPolicy !== undefined)
          await sql`update operators set retry_policy = ${sql.json({ ...patch.retryPolicy })}
                    where operator_id = ${op.operator_id}`;
        if (patch.roundClose !== undefined)
          await sql`update operators set round_close = ${patch.roundClose} where operator_id = ${op.operator_id}`;
        if (patch.form !== undefined)
          await sql`update operators set callback_form = ${patch.form} where operator_id = ${op.operator_id}`;
        if (patch.answerTable !== undefined)
          await sql`update operators set answer_table = ${sql.json(patch.answerTable as never)}
                    where operator_id = ${op.operator_id}`;
        await sleep(config.walletSaga.cacheMs + 100);
      },
    };
    return stack;
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
}
