/**
 * Reconciliation of the platform's wallet read models with the sandbox operator's ledger (what the
 * fault tests require: "the sandbox ledger and our read models agree at the end, with no lost and
 * no doubled money, checked by a reconciliation query"). Both live in one Postgres database here
 * (two schemas), so it is one query per check; against a real operator the same comparison runs on
 * its transaction report.
 *
 * Per bet (provider_tx_id b, its win b+1 and its rollback b+2), the money the operator moved must
 * equal what the platform's outcomes say it moved:
 *   −amount if the bet's debit succeeded, + payout if the win succeeded, + amount if a rollback
 *   succeeded after a debit that succeeded (a free bet has no debit, only its win). A bet whose debit failed or timed out counts 0 on the
 *   platform: the operator must then show no debit, or a debit and its refund (compensation).
 * Rows still pending, failed or parked are outstanding, not mismatches, and so is a debited (or
 * registered free) bet whose round is still open (its win may yet be owed), and a lost one whose
 * round the operator has not had closed yet (unless that close was skipped: the operator closed
 * no rounds when it came due); `settled` is false while any
 * remain. Every operator movement must belong to a bet the platform knows. Each account's
 * balance must equal its first balance plus its movements.
 */
import type { Sql } from '../../lib/db/pool.ts';

export interface ReconcileInput {
  /** Schema of the platform's read models (wallet_transactions). */
  readonly platformSchema: string;
  /** Schema of the sandbox ledger (accounts, transactions). */
  readonly sandboxSchema: string;
  readonly operatorId: string;
  /**
   * Starting balance of a sandbox account, minor units: one number for every account, or per
   * currency (SANDBOX_INITIAL_BALANCE in each currency's precision: money.ts `initialMinor`).
   */
  readonly initialBalanceMinor: number | ((currency: string) => number);
}

export interface ReconcileReport {
  /** No mismatch (outstanding rows may remain). */
  readonly agreed: boolean;
  /** Agreed and nothing outstanding. */
  readonly settled: boolean;
  readonly bets: number;
  /** Bets whose operator movement differs from the platform's outcome: [bet tx id, operator, platform]. */
  readonly mismatches: readonly { bet_tx_id: string; operator_minor: string; platform_minor: string }[];
  /** Operator movements of bets the platform does not know (provider_tx_id). */
  readonly unknown: readonly string[];
  /** Accounts whose balance is not the first balance plus their movements. */
  readonly broken_accounts: readonly string[];
  /** Platform rows not final yet: tx id and status (`open`: a confirmed bet whose round is not settled). */
  readonly outstanding: readonly { tx_id: string; kind: string; status: string }[];
}

const ident = (s: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(s)) throw new Error(`not a schema name: ${s}`);
  return `"${s}"`;
};

/**
 * Compares the two sides for one operator. Read-only.
 * @throws Error for a malformed schema name; postgres errors when a table is missing.
 */
export async function reconcile(sql: Sql, input: ReconcileInput): Promise<ReconcileReport> {
  const p = ident(input.platformSchema);
  const s = ident(input.sandboxSchema);
  const op = input.operatorId;
  const perBet = await sql.unsafe<{ bet_tx_id: string; operator_minor: string; platform_minor: string }[]>(
    `with bets as (
       select b.tx_id, b.amount_minor, b.status = 'succeeded' and b.mode = 'default' as debited
       from ${p}.wallet_transactions b
       where b.kind = 'bet' and b.operator_id = $1 and not b.demo
     ),
     platform as (
       select bets.tx_id,
              (case when bets.debited then -bets.amount_minor else 0 end)
              + coalesce((select w.amount_minor from ${p}.wallet_transactions w
                          where w.tx_id = bets.tx_id + 1 and w.kind = 'win' and w.status = 'succeeded'), 0)
              + coalesce((select bets.amount_minor from ${p}.wallet_transactions r
                          where r.tx_id = bets.tx_id + 2 and r.kind = 'rollback' and r.status = 'succeeded'
                            and bets.debited), 0) as platform_minor
       from bets
     ),
     operator as (
       select (t.provider_tx_id::bigint / 4) * 4 as bet_tx_id, sum(t.delta_minor) as operator_minor
       from ${s}.transactions t group by 1
     )
     select platform.tx_id::text as bet_tx_id, coalesce(operator.operator_minor, 0)::text as operator_minor,
            platform.platform_minor::text as platform_minor
     from platform left join operator on operator.bet_tx_id = platform.tx_id`,
    [op],
  );
  const unknown = await sql.unsafe<{ provider_tx_id: string }[]>(
    `select t.provider_tx_id from ${s}.transactions t
     where not exists (select 1 from ${p}.wallet_transactions b
                       where b.kind = 'bet' and b.tx_id = (t.provider_tx_id::bigint / 4) * 4)
     order by t.operator_tx_id`,
  );
  const accounts = await sql.unsafe<{ account: string; currency: string; balance: string; moved: string }[]>(
    `select a.user_id || '/' || a.currency as account, a.currency, a.balance_minor::text as balance,
            coalesce((select sum(t.delta_minor) from ${s}.transactions t
                      where t.user_id = a.user_id and t.currency = a.currency), 0)::text as moved
     from ${s}.accounts a`,
  );
  const initial = input.initialBalanceMinor;
  const initialOf = typeof initial === 'number' ? () => initial : initial;
  const broken = accounts.filter(
    (a) => BigInt(a.balance) !== BigInt(initialOf(a.currency)) + BigInt(a.moved),
  );
  const outstanding = await sql.unsafe<{ tx_id: string; kind: string; status: string }[]>(
    `select tx_id::text, kind,
            case when status = 'succeeded' then 'open' else status end as status
     from ${p}.wallet_transactions
     where operator_id = $1 and not demo
       and (status in ('pending', 'failed', 'parked')
            or (kind = 'bet' and status = 'succeeded' and round_status = 'open'))
     union all
     -- A lost bet whose round is not closed at the operator yet, unless its
     -- close was skipped (the operator closed no rounds when it came due).
     select b.tx_id::text, 'close', 'unclosed'
     from ${p}.wallet_transactions b
     where b.operator_id = $1 and not b.demo and b.kind = 'bet' and b.status = 'succeeded'
       and b.round_status = 'lost'
       and not exists (select 1 from ${p}.wallet_transactions c
                       where c.tx_id = b.tx_id + 1 and c.kind = 'close' and c.status = 'succeeded')
       and not exists (select 1 from ${p}.wallet_callbacks k
                       where k.tx_id = b.tx_id + 1 and k.status = 'skipped')
     order by 1`,
    [op],
  );
  const mismatches = perBet.filter((r) => r.operator_minor !== r.platform_minor);
  const agreed = mismatches.length === 0 && unknown.length === 0 && broken.length === 0;
  return {
    agreed,
    settled: agreed && outstanding.length === 0,
    bets: perBet.length,
    mismatches,
    unknown: unknown.map((u) => u.provider_tx_id),
    broken_accounts: broken.map((b) => b.account),
    outstanding,
  };
}
