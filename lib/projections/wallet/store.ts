/**
 * Postgres side of the wallet projection (tables of migration 003): ONE statement per batch holds
 * the wallet_transactions upserts, the wallet_balances updates and the checkpoint (same pattern
 * and reasons as lib/projections/rounds/store.ts). The upsert applies the merge rules of
 * projection.ts against the stored row, so replays and duplicates change nothing.
 *
 * A patch without its bet context (a callback outcome whose BetPlaced came in an earlier batch)
 * takes it from the stored bet row (bet_tx_id). Data-modifying CTEs do not see each other's rows,
 * so demo balances are computed from the stored rows outside this batch plus the rows the upsert
 * returns. A demo balance starts at DEMO_START_MAJOR of its currency and is written as a decimal
 * string with exactly the currency's exponent of digits ("1000.00" USD, "1000" JPY), the exponents
 * coming from the currency table (ISO 4217 + CRYPTO_CURRENCIES) as one parameter array.
 */

import type { Currencies } from '../../../rules/money/currencies.ts';
import { DEMO_START_MAJOR } from '../../../rules/money/money.ts';
import { type CheckpointKey, checkpointUpsert } from '../../db/checkpoints.ts';
import type { Sql } from '../../db/pool.ts';
import { type BalanceEntry, ROUND_RANK, STATUS_RANK, type TxPatch } from './projection.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const rank = (list: readonly string[]) => `array[${list.map((s) => `'${s}'`).join(',')}]`;

/**
 * Applies `patches` and `balances` and sets the checkpoint of `key` to `nextOffset`, atomically;
 * demo balances in the precision `currencies` gives their currency.
 * @returns rows upserted.
 * @throws the postgres.js error; nothing is then stored (a demo row in a currency missing from
 *   `currencies` gets a null balance, which the table refuses: the batch is dead-lettered, not guessed).
 */
export async function writeWallet(
  sql: Sql,
  key: CheckpointKey,
  patches: readonly TxPatch[],
  balances: readonly BalanceEntry[],
  nextOffset: bigint,
  currencies: Currencies,
): Promise<number> {
  const c = <T>(f: (p: TxPatch) => T) => patches.map(f);
  const ctx = <T>(f: (b: NonNullable<TxPatch['ctx']>) => T) => patches.map((p) => (p.ctx ? f(p.ctx) : null));
  const bctx = <T>(f: (b: NonNullable<BalanceEntry['ctx']>) => T) =>
    balances.map((b) => (b.ctx ? f(b.ctx) : null));
  const S = sql.unsafe(rank(STATUS_RANK));
  const R = sql.unsafe(rank(ROUND_RANK));
  const [r] = await sql<{ n: number }[]>`
    with p as (
      select * from unnest(
        ${c((p) => String(p.tx_id))}::bigint[], ${c((p) => String(p.bet_tx_id))}::bigint[], ${c((p) => p.kind)}::text[],
        ${ctx((b) => b.session_id)}::uuid[], ${ctx((b) => b.operator_id)}::text[], ${ctx((b) => b.user_id)}::text[],
        ${ctx((b) => b.currency)}::text[], ${ctx((b) => b.game)}::text[], ${ctx((b) => String(b.round_id))}::bigint[],
        ${c((p) => (p.amount_minor === null ? null : String(p.amount_minor)))}::bigint[],
        ${ctx((b) => b.mode)}::text[], ${ctx((b) => String(b.demo))}::text[],
        ${c((p) => p.status)}::text[], ${c((p) => p.round_status)}::text[], ${c((p) => p.attempts)}::int[],
        ${c((p) => p.operator_tx_id)}::text[], ${c((p) => p.old_balance)}::text[], ${c((p) => p.new_balance)}::text[],
        ${c((p) => p.detail)}::text[], ${c((p) => iso(p.requested_at))}::timestamptz[],
        ${c((p) => iso(p.updated_at))}::timestamptz[]
      ) as t(tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game, round_id, amount_minor,
             mode, demo, status, round_status, attempts, operator_tx_id, old_balance, new_balance, detail,
             requested_at, updated_at)
    ), src as (
      select p.tx_id, p.bet_tx_id, p.kind,
        coalesce(p.session_id, b.session_id) as session_id, coalesce(p.operator_id, b.operator_id) as operator_id,
        coalesce(p.user_id, b.user_id) as user_id, coalesce(p.currency, b.currency) as currency,
        coalesce(p.game, b.game) as game, coalesce(p.round_id, b.round_id) as round_id,
        coalesce(p.amount_minor, case when p.kind = 'bet' or p.kind = 'rollback' then b.amount_minor end, 0) as amount_minor,
        coalesce(p.mode, b.mode) as mode, coalesce(p.demo::boolean, b.demo) as demo,
        coalesce(p.status, 'pending') as status, coalesce(p.round_status, 'open') as round_status,
        coalesce(p.attempts, 0) as attempts, p.operator_tx_id, p.old_balance, p.new_balance, p.detail,
        p.requested_at, p.updated_at
      from p left join wallet_transactions b on b.tx_id = p.bet_tx_id
      where p.session_id is not null or b.tx_id is not null
    ), up as (
      insert into wallet_transactions as w (tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game,
        round_id, amount_minor, mode, demo, status, round_status, requested_at, updated_at, operator_tx_id,
        old_balance, new_balance, attempts, detail)
      select tx_id, bet_tx_id, kind, session_id, operator_id, user_id, currency, game, round_id, amount_minor, mode,
        demo, status, round_status, requested_at, updated_at, operator_tx_id, old_balance, new_balance, attempts, detail
      from src
      on conflict (tx_id) do update set
        amount_minor = greatest(w.amount_minor, excluded.amount_minor),
        status = case when array_position(${S}, excluded.status) > array_position(${S}, w.status)
                      then excluded.status else w.status end,
        round_status = case when array_position(${R}, excluded.round_status) > array_position(${R}, w.round_status)
                            then excluded.round_status else w.round_status end,
        attempts = greatest(w.attempts, excluded.attempts),
        operator_tx_id = coalesce(w.operator_tx_id, excluded.operator_tx_id),
        old_balance = coalesce(w.old_balance, excluded.old_balance),
        new_balance = coalesce(w.new_balance, excluded.new_balance),
        detail = case when excluded.updated_at >= w.updated_at then coalesce(excluded.detail, w.detail)
                      else coalesce(w.detail, excluded.detail) end,
        requested_at = least(w.requested_at, excluded.requested_at),
        updated_at = greatest(w.updated_at, excluded.updated_at)
      returning w.tx_id, w.kind, w.operator_id, w.user_id, w.currency, w.demo, w.amount_minor, w.round_status, w.updated_at
    ), answered as (
      select coalesce(a.operator_id, b.operator_id) as operator_id, coalesce(a.user_id, b.user_id) as user_id,
        coalesce(a.currency, b.currency) as currency, a.balance, a.at, a.seq
      from unnest(
        ${balances.map((b) => String(b.bet_tx_id))}::bigint[], ${bctx((b) => b.operator_id)}::text[],
        ${bctx((b) => b.user_id)}::text[], ${bctx((b) => b.currency)}::text[], ${balances.map((b) => b.balance)}::text[],
        ${balances.map((b) => iso(b.at))}::timestamptz[], ${balances.map((b) => b.seq)}::int[]
      ) as a(bet_tx_id, operator_id, user_id, currency, balance, at, seq)
      left join wallet_transactions b on b.tx_id = a.bet_tx_id
    ), demo_users as (
      select distinct operator_id, user_id, currency from up where demo
    ), demo_rows as (
      select w.kind, w.operator_id, w.user_id, w.currency, w.amount_minor, w.round_status, w.updated_at
      from wallet_transactions w join demo_users d using (operator_id, user_id, currency)
      where w.demo and w.tx_id not in (select tx_id from up)
      union all
      select kind, operator_id, user_id, currency, amount_minor, round_status, updated_at from up where demo
    ), exponents as (
      select * from unnest(${currencies.codes as string[]}::text[],
                           ${currencies.codes.map((c) => currencies.exponentOf(c))}::int[]) as x(currency, e)
    ), demo as (
      select d.operator_id, d.user_id, d.currency, x.e, ${DEMO_START_MAJOR}::numeric * power(10::numeric, x.e) - coalesce(sum(case
          when kind = 'bet' and round_status <> 'cancelled' then amount_minor
          when kind = 'win' then -amount_minor else 0 end), 0) as minor,
        max(updated_at) as at
      from demo_rows d left join exponents x using (currency) group by d.operator_id, d.user_id, d.currency, x.e
    ), latest as (
      select distinct on (operator_id, user_id, currency) operator_id, user_id, currency, balance, at
      from (
        select operator_id, user_id, currency, balance, at, seq from answered where operator_id is not null
        union all
        select operator_id, user_id, currency, round(minor / power(10::numeric, e), e)::text, at, -1 from demo
      ) x
      order by operator_id, user_id, currency, at desc, seq desc
    ), balances as (
      insert into wallet_balances as wb (operator_id, user_id, currency, balance, updated_at)
      select operator_id, user_id, currency, balance, at from latest
      on conflict (operator_id, user_id, currency) do update set balance = excluded.balance, updated_at = excluded.updated_at
        where excluded.updated_at >= wb.updated_at
      returning 1
    ), checkpoint as (
      ${checkpointUpsert(sql, key, nextOffset)}
    )
    select (select count(*) from up)::int as n, (select count(*) from balances)::int as b`;
  return r?.n ?? 0;
}
