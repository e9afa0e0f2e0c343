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
 * Virtual balance of a demo session, minor units: its starting balance, minus its bets that were
 * not rejected, plus its wins, from the wallet_transactions read model (per session, so a user's
 * demo and real play never mix). Bets not yet projected are not subtracted.
 */
export async function demoBalanceMinor(sql: Sql, s: PlayerSession): Promise<number> {
  const [r] = await sql<{ delta: string | null }[]>`
    select sum(case when kind = 'win' then amount_minor
                    when kind = 'bet' and status <> 'rejected' then -amount_minor
                    else 0 end) as delta
    from wallet_transactions where session_id = ${s.session_id}`;
  return (s.balance_minor ?? DEMO_START_MINOR) + Number(r?.delta ?? 0);
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
