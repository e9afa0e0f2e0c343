/**
 * The player's balance: the operator's Balance callback (issue 5 contract "balance (POST)") for
 * real sessions, the virtual balance for demo sessions (no callback, seed 001 / issue 5 item 3).
 *
 * `fetchOperatorBalance` is the API's own small client (the saga's callback client classifies money
 * answers, not balances); it signs with the saga's Standard Webhooks headers like every callback.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../../lib/db/pool.ts';
import { signHeaders } from '../../../lib/http/callback-client.ts';
import { toDecimalString } from '../../../rules/money/money.ts';
import { BadGatewayError } from '../errors.ts';
import type { OperatorRow, PlayerSession } from './guards.ts';
import { DEMO_START_MINOR } from './request-access.ts';

/** What the API shows the player. `balance` is a decimal string with two decimals ("12.50"). */
export interface PlayerBalance {
  readonly balance: string;
  readonly currency: string;
  readonly demo: boolean;
}

const DECIMAL = /^-?\d{1,15}\.\d{2}$/;

/**
 * POSTs `{user_id, currency, session_token}` to the operator's balance path, signed (headers
 * webhook-id `balance-<uuid>`, webhook-timestamp in s, webhook-signature), within its timeout_ms.
 * @returns the operator's `balance` (decimal string) and `currency`.
 * @throws BadGatewayError when the operator cannot be reached, times out, answers non-200, or
 *   answers a body without a decimal-string balance.
 */
export async function fetchOperatorBalance(
  op: Pick<OperatorRow, 'base_url' | 'balance_path' | 'signing_secret' | 'timeout_ms'>,
  req: { user_id: string; currency: string; session_token: string },
  now: () => number = Date.now,
): Promise<{ balance: string; currency: string }> {
  const body = JSON.stringify({
    user_id: req.user_id,
    currency: req.currency,
    session_token: req.session_token,
  });
  const headers = {
    'content-type': 'application/json',
    ...signHeaders(`balance-${randomUUID()}`, body, op.signing_secret, now()),
  };
  let res: Response;
  try {
    res = await fetch(`${op.base_url}${op.balance_path}`, {
      method: 'POST',
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
export async function demoBalanceMinor(sql: Sql, s: PlayerSession): Promise<number> {
  const [r] = await sql<{ credits: string; debited: string | null }[]>`
    with c as (${demoCredits(sql, s)})
    select (select credits from c)::text as credits,
           (select debited_minor from demo_wallets where session_id = ${s.session_id})::text as debited`;
  return (s.balance_minor ?? DEMO_START_MINOR) + Number(r?.credits ?? 0) - Number(r?.debited ?? 0);
}

/**
 * Takes `amountMinor` from a demo session's virtual balance in ONE statement (a conditional upsert
 * of its demo_wallets row, re-checked on the locked row), so no number of simultaneous bets takes
 * the balance below zero (issue 11 item 5).
 * @returns false when the balance does not cover it (nothing is taken).
 */
export async function debitDemo(sql: Sql, s: PlayerSession, amountMinor: number): Promise<boolean> {
  const start = s.balance_minor ?? DEMO_START_MINOR;
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

/** The player's balance. @throws BadGatewayError (real sessions) when the operator fails. */
export async function playerBalance(
  deps: { sql: Sql; fetchBalance: typeof fetchOperatorBalance; now: () => number },
  s: PlayerSession,
): Promise<PlayerBalance> {
  if (s.demo)
    return {
      balance: toDecimalString(await demoBalanceMinor(deps.sql, s)),
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
  return { balance: b.balance, currency: b.currency, demo: false };
}
