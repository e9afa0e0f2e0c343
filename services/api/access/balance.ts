/**
 * The player's balance: the operator's Balance callback (docs/contract.md "Implemented by the operator") for
 * real sessions, the virtual balance for demo sessions (no callback, docs/contract.md "Operator callbacks").
 *
 * `fetchOperatorBalance` is the API's own small client (the saga's callback client classifies money
 * answers, not balances); it signs with the saga's Standard Webhooks headers like every callback.
 */
import { randomUUID } from 'node:crypto';
import { rowSigningSecrets } from '../../../lib/db/operator-config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { signHeaders } from '../../../lib/http/callback-client.ts';
import type { Currencies } from '../../../rules/money/currencies.ts';
import { buildBalanceRequest } from '../../../rules/wallet/bodies.ts';
import { BadGatewayError } from '../errors.ts';
import type { OperatorRow, PlayerSession } from './guards.ts';
import { demoStartMinor } from './money.ts';

/**
 * What the API shows the player. `balance` is a decimal string in the currency's precision
 * ("12.50" USD, "1250" JPY, "0.00000001" BTC).
 */
export interface PlayerBalance {
  readonly balance: string;
  readonly currency: string;
  readonly demo: boolean;
}

/** A decimal string; its digits after the point are checked against the currency by playerBalance. */
const DECIMAL = /^-?\d{1,20}(\.\d{1,12})?$/;

/**
 * POSTs `{user_id, currency, session_token}` (rules/wallet/bodies.ts buildBalanceRequest) to the
 * operator's balance path, signed (headers
 * webhook-id `balance-<uuid>`, webhook-timestamp in s, webhook-signature), within its timeout_ms.
 * @returns the operator's `balance` (decimal string) and `currency`.
 * @throws BadGatewayError when the operator cannot be reached, times out, answers non-200, or
 *   answers a body without a decimal-string balance.
 */
export async function fetchOperatorBalance(
  op: Pick<
    OperatorRow,
    | 'base_url'
    | 'balance_path'
    | 'signing_secret'
    | 'previous_signing_secret'
    | 'previous_secret_valid_until'
    | 'timeout_ms'
  >,
  req: { user_id: string; currency: string; session_token: string },
  now: () => number = Date.now,
): Promise<{ balance: string; currency: string }> {
  const request = buildBalanceRequest(
    { baseUrl: op.base_url, balancePath: op.balance_path },
    { userId: req.user_id, currency: req.currency, sessionToken: req.session_token },
    `balance-${randomUUID()}`,
  );
  const body = JSON.stringify(request.body);
  const headers = {
    'content-type': 'application/json',
    ...signHeaders(request.webhookId, body, rowSigningSecrets(op, now()), now()),
  };
  let res: Response;
  try {
    res = await fetch(request.url, {
      method: request.method,
      headers,
      body,
      signal: AbortSignal.timeout(op.timeout_ms),
    });
  } catch (err) {
    throw new BadGatewayError('the operator balance callback failed (unreachable or timed out)', err);
  }
  const text = await res.text().catch(() => '');
  if (res.status !== 200) throw new BadGatewayError(`the operator balance callback answered ${res.status}`);
  let parsed: { balance?: unknown; currency?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (err) {
    throw new BadGatewayError('the operator balance callback answered malformed JSON', err);
  }
  if (typeof parsed?.balance !== 'string' || !DECIMAL.test(parsed.balance))
    throw new BadGatewayError('the operator balance callback answered no decimal-string balance');
  return {
    balance: parsed.balance,
    currency: typeof parsed.currency === 'string' ? parsed.currency : req.currency,
  };
}

/**
 * What a demo session got back, minor units: its wins, and the stakes of its bets that were
 * rejected or cancelled (refunds), from the wallet_transactions read model. The model lags, so
 * this only ever under-counts: a balance from it is never too high.
 */
function demoCredits(sql: Sql, s: PlayerSession) {
  return sql`
    select coalesce(sum(case when kind = 'win' then amount_minor
                             when kind = 'bet' and status = 'rejected' then amount_minor
                             else 0 end), 0) as credits
    from wallet_transactions where session_id = ${s.session_id} and demo`;
}

/**
 * Virtual balance of a demo session, minor units: its starting balance, minus the stakes it bet
 * (demo_wallets, debited at once and atomically by `debitDemo`), plus its credits (wins and refunds
 * from the read model).
 */
export async function demoBalanceMinor(sql: Sql, s: PlayerSession, currencies: Currencies): Promise<number> {
  const [r] = await sql<{ credits: string; debited: string | null }[]>`
    with c as (${demoCredits(sql, s)})
    select (select credits from c)::text as credits,
           (select debited_minor from demo_wallets where session_id = ${s.session_id})::text as debited`;
  return demoStart(s, currencies) + Number(r?.credits ?? 0) - Number(r?.debited ?? 0);
}

/**
 * Takes `amountMinor` from a demo session's virtual balance in ONE statement (a conditional upsert
 * of its demo_wallets row, re-checked on the locked row), so no number of simultaneous bets takes
 * the balance below zero.
 * @returns false when the balance does not cover it (nothing is taken).
 */
export async function debitDemo(
  sql: Sql,
  s: PlayerSession,
  amountMinor: number,
  currencies: Currencies,
): Promise<boolean> {
  const start = demoStart(s, currencies);
  const rows = await sql`
    with c as (${demoCredits(sql, s)})
    insert into demo_wallets as w (session_id, debited_minor)
    select ${s.session_id}, ${amountMinor}
    where ${start} + (select credits from c) >= ${amountMinor}
    on conflict (session_id) do update set debited_minor = w.debited_minor + excluded.debited_minor
      where ${start} + (select credits from c) - w.debited_minor >= excluded.debited_minor
    returning debited_minor`;
  return rows.length === 1;
}

/** Gives back a demo debit whose bet never reached the log. */
export async function refundDemo(sql: Sql, s: PlayerSession, amountMinor: number): Promise<void> {
  await sql`
    update demo_wallets set debited_minor = greatest(0, debited_minor - ${amountMinor})
    where session_id = ${s.session_id}`;
}

/** A demo session's starting balance, minor units: the one it was given, else DEMO_START_MAJOR of its currency. */
function demoStart(s: PlayerSession, currencies: Currencies): number {
  return s.balance_minor ?? demoStartMinor(currencies, s.currency);
}

/**
 * The player's balance, in the precision of the session's currency.
 * @throws BadGatewayError (real sessions) when the operator fails, or answers a balance with more
 *   digits after the point than its currency has.
 */
export async function playerBalance(
  deps: { sql: Sql; fetchBalance: typeof fetchOperatorBalance; now: () => number; currencies: Currencies },
  s: PlayerSession,
): Promise<PlayerBalance> {
  const { currencies } = deps;
  if (s.demo)
    return {
      balance: currencies.formatMinor(await demoBalanceMinor(deps.sql, s, currencies), s.currency),
      currency: s.currency,
      demo: true,
    };
  const [op] = await deps.sql<OperatorRow[]>`select * from operators where operator_id = ${s.operator_id}`;
  if (!op) throw new BadGatewayError(`operator ${s.operator_id} is not registered`);
  const b = await deps.fetchBalance(
    op,
    { user_id: s.user_id, currency: s.currency, session_token: s.session_token },
    deps.now,
  );
  const unsigned = b.balance.startsWith('-') ? b.balance.slice(1) : b.balance;
  if (currencies.parseAmount(unsigned, b.currency) === undefined)
    throw new BadGatewayError(
      `the operator balance callback answered ${b.balance}, not a ${b.currency} amount (${currencies.isCurrency(b.currency) ? `at most ${currencies.exponentOf(b.currency)} decimals` : 'unknown currency'})`,
    );
  return { balance: b.balance, currency: b.currency, demo: false };
}
