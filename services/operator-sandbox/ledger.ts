/**
 * The sandbox's ledger in Postgres (migrations/001_ledger.sql). Each money movement is one
 * transaction that first locks the player's account row (an upsert, which takes the row lock), so
 * two callbacks of one player, including two copies of the same callback sent at once, run one
 * after the other; the second then finds the first's row and answers with its stored response.
 * Round trips are few on purpose, since under load each one waits for a core: BEGIN; the lock (with
 * the next id) sent together with one read of all the rules need (readContext); balance and
 * movement in one statement; COMMIT. The rules themselves (`decide`) are pure. Quirks (quirks.ts)
 * switch single rules off, for the conformance kit's tests; each is named where it bites.
 *
 * A free bet's registration (mode "free", amount 0) is booked as a bet that moves no money; its win
 * is linked to it like any other. Strict (mode.ts) refuses a free bet's win whose free bet was never
 * registered; lenient credits it anyway (an operator that keeps its grants to itself).
 */
import pRetry from 'p-retry';
import type postgres from 'postgres';
import type { Sql } from '../../lib/db/pool.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import { SandboxError } from './errors.ts';
import type { LedgerMoney } from './money.ts';
import type { QuirkCheck } from './quirks.ts';
import { type BalanceRequest, balanceResponse, type Movement, movementResponse } from './wire.ts';

/** The stored or fresh answer to a money callback; `replay` when it was stored before. */
export interface MovementResult {
  readonly response: Record<string, string>;
  readonly replay: boolean;
}

type Tx = postgres.TransactionSql<Record<string, never>>;

/**
 * Creates the account at first sight and locks it, in one statement: the upsert takes the row lock
 * (ON CONFLICT DO UPDATE works on the newest committed version, so the balance is current), and
 * the next operator_tx_id comes with it, taken whether or not a movement is then written (a replay
 * or a refusal leaves a gap, as a rolled-back transaction does).
 */
async function lockAccount(
  tx: Tx,
  userId: string,
  currency: string,
  initialMinor: number,
): Promise<{ balance: number; nextId: string }> {
  const [row] = await tx<{ balance_minor: string; next_id: string }[]>`
    insert into accounts (user_id, currency, balance_minor) values (${userId}, ${currency}, ${initialMinor})
    on conflict (user_id, currency) do update set balance_minor = accounts.balance_minor
    returning balance_minor, nextval(pg_get_serial_sequence('transactions', 'operator_tx_id'))::text as next_id`;
  return { balance: Number(row?.balance_minor), nextId: String(row?.next_id) };
}

/**
 * What the rules need to know about `m` beside the balance, read in ONE statement after the
 * account's lock (so it sees every movement committed before the lock was granted):
 * - `seen`: this kind and provider_tx_id booked before (the idempotency key), its body hash and
 *   first answer;
 * - `rollbackBefore`: a rollback that came before bet `m`: one naming it, or a form-B rollback of
 *   that player's round and amount that found no bet to name (stored unlinked);
 * - `bet`: the bet a win or rollback refers to: by linked_tx_id (form A) or, the body naming none
 *   (form B), by the player's bet of that game and round; of several bets in one round, the one this
 *   callback most likely means: of its mode, of its amount (a rollback carries the stake), not
 *   rolled back, not yet won, then the first booked;
 * - `linkedRollback` / `linkedWin`: the first rollback (its answer) and the first win (its id; a
 *   zero-amount round close counts: the bet is settled) booked on the bet `m` names, or else on
 *   `bet`.
 */
interface Context {
  readonly seen: { readonly bodyHash: string; readonly response: string } | null;
  readonly rollbackBefore: boolean;
  readonly bet: { readonly providerTxId: string; readonly amountMinor: number } | null;
  readonly linkedRollback: string | null;
  readonly linkedWin: string | null;
}

interface ContextRow {
  seen_hash: string | null;
  seen_response: string | null;
  rollback_before: boolean;
  bet_id: string | null;
  bet_amount: string | null;
  linked_rollback: string | null;
  linked_win: string | null;
}

/** Reads `m`'s Context (see there). @throws the postgres.js error. */
async function readContext(tx: Tx, m: Movement): Promise<Context> {
  const stake = m.kind === 'rollback' ? m.amountMinor : null;
  const bet =
    m.linkedTxId !== null
      ? tx`select provider_tx_id, amount_minor from transactions where kind = 'bet'
           and provider_tx_id = ${m.linkedTxId} and user_id = ${m.userId} and currency = ${m.currency}`
      : tx`select t.provider_tx_id, t.amount_minor from transactions t where t.kind = 'bet'
           and t.user_id = ${m.userId} and t.currency = ${m.currency} and t.game = ${m.game}
           and t.round_id = ${m.roundId}
           order by t.mode <> ${m.mode},
                    coalesce(t.amount_minor <> ${stake}::bigint, false),
                    (exists (select 1 from transactions r where r.kind = 'rollback'
                             and r.linked_tx_id = t.provider_tx_id)),
                    (exists (select 1 from transactions w where w.kind = 'win'
                             and w.linked_tx_id = t.provider_tx_id)),
                    t.operator_tx_id limit 1`;
  const [row] = await tx<ContextRow[]>`
    with bet as (${bet}),
    lnk as (select coalesce(${m.linkedTxId}::text, (select provider_tx_id from bet)) as id)
    select s.body_hash as seen_hash, s.response as seen_response,
      exists (select 1 from transactions r where r.kind = 'rollback'
              and (r.linked_tx_id = ${m.providerTxId}
                   or (r.linked_tx_id is null and r.user_id = ${m.userId} and r.currency = ${m.currency}
                       and r.game = ${m.game} and r.round_id = ${m.roundId}
                       and r.amount_minor = ${m.amountMinor}))) as rollback_before,
      b.provider_tx_id as bet_id, b.amount_minor::text as bet_amount,
      (select r.response from transactions r where r.kind = 'rollback' and r.linked_tx_id = lnk.id
       order by r.operator_tx_id limit 1) as linked_rollback,
      (select w.provider_tx_id from transactions w where w.kind = 'win' and w.linked_tx_id = lnk.id
       order by w.operator_tx_id limit 1) as linked_win
    from lnk
    left join bet b on true
    left join transactions s on s.kind = ${m.kind} and s.provider_tx_id = ${m.providerTxId}`;
  const r = row as ContextRow;
  return {
    seen: r.seen_hash !== null ? { bodyHash: r.seen_hash, response: r.seen_response as string } : null,
    rollbackBefore: r.rollback_before,
    bet: r.bet_id !== null ? { providerTxId: r.bet_id, amountMinor: Number(r.bet_amount) } : null,
    linkedRollback: r.linked_rollback,
    linkedWin: r.linked_win,
  };
}

/** The refusal of bet `m` above `balanceMinor` (also the operator guide's example, examples.ts). */
export function insufficientFunds(m: Movement, balanceMinor: number, currencies: Currencies): SandboxError {
  const f = (minor: number) => currencies.formatMinor(minor, m.currency);
  return new SandboxError(
    'INSUFFICIENT_FUNDS',
    `balance ${f(balanceMinor)} is below the bet ${f(m.amountMinor)}`,
  );
}

/** The refusal of win `m` whose bet this ledger never booked. */
export function betNotFound(m: Movement): SandboxError {
  return new SandboxError(
    'BET_NOT_FOUND',
    `no bet ${m.linkedTxId ?? `of round ${m.roundId}`} for this player`,
  );
}

/**
 * The balance change of `m` given the account's balance and its context, or a stored answer to
 * return instead. Pure.
 * @throws SandboxError INSUFFICIENT_FUNDS, BET_ROLLED_BACK, BET_NOT_FOUND, BET_SETTLED.
 */
function decide(
  m: Movement,
  balance: number,
  ctx: Context,
  money: LedgerMoney,
  rules: LedgerRules,
): { delta: number; linked: string | null } | { stored: Record<string, string> } {
  const { quirks } = rules;
  if (m.kind === 'bet') {
    if (!quirks.has('accept-late-bet') && ctx.rollbackBefore)
      throw new SandboxError('BET_ROLLED_BACK', `bet ${m.providerTxId} was rolled back before it arrived`);
    if (balance < m.amountMinor && !quirks.has('no-insufficient-funds-check'))
      throw insufficientFunds(m, balance, money.currencies);
    return { delta: -m.amountMinor, linked: null };
  }
  const { bet } = ctx;
  if (m.kind === 'win') {
    // Lenient: a free bet's win is credited even when the free bet was never registered.
    if (!bet && m.mode === 'free' && !rules.strict) return { delta: m.amountMinor, linked: m.linkedTxId };
    if (!bet) throw betNotFound(m);
    // The rollback read is of m.linkedTxId ?? the bet's id: the bet's own id whenever a bet is found.
    if (!quirks.has('credit-after-rollback') && ctx.linkedRollback !== null)
      throw new SandboxError('BET_ROLLED_BACK', `bet ${bet.providerTxId} was rolled back; no win on it`);
    return { delta: m.amountMinor, linked: bet.providerTxId };
  }
  // Form B names no bet: the round's bet when there is one, else none (stored unlinked).
  const linked = m.linkedTxId ?? bet?.providerTxId ?? null;
  if (linked !== null) {
    // A second rollback of one bet, under another id, returns the first answer (contract).
    if (ctx.linkedRollback !== null)
      return { stored: JSON.parse(ctx.linkedRollback) as Record<string, string> };
    // A settled bet keeps its stake (docs/architecture.md "Money rules": never a rollback after a win).
    if (ctx.linkedWin !== null && !quirks.has('refund-after-win'))
      throw new SandboxError('BET_SETTLED', `bet ${linked} was settled by win ${ctx.linkedWin}; no refund`);
  }
  // Unknown bet: acknowledged with delta 0 and remembered, so the late bet is refused.
  if (!bet && quirks.has('refund-unknown-rollback')) return { delta: m.amountMinor, linked };
  return { delta: bet ? bet.amountMinor : 0, linked };
}

/**
 * Quirk `debit-duplicates`: a replayed bet debited again under a new operator_tx_id, with no
 * ledger row (the id is taken), as a wallet without an idempotency key would.
 */
async function debitAgain(
  tx: Tx,
  m: Movement,
  balance: number,
  id: string,
  money: LedgerMoney,
): Promise<MovementResult> {
  const next = balance - m.amountMinor;
  await tx`update accounts set balance_minor = ${next}, updated_at = now()
           where user_id = ${m.userId} and currency = ${m.currency}`;
  return { response: movementResponse(m, id, balance, next, money.currencies), replay: false };
}

/** The ledger's switches: rules broken on purpose (quirks.ts), and the strict mode's (mode.ts). */
export interface LedgerRules {
  readonly quirks: QuirkCheck;
  readonly strict: boolean;
}

async function applyOnce(
  sql: Sql,
  m: Movement,
  money: LedgerMoney,
  rules: LedgerRules,
): Promise<MovementResult> {
  const { quirks } = rules;
  return sql.begin(async (tx) => {
    // Sent together (one round trip): the server runs the read after the lock is granted, with a
    // snapshot of its own, so it sees what the lock's previous holder committed.
    const [{ balance, nextId: id }, ctx] = await Promise.all([
      lockAccount(tx, m.userId, m.currency, money.initialMinor(m.currency)),
      readContext(tx, m),
    ]);
    const { seen } = ctx;
    if (seen) {
      const same = seen.bodyHash === m.bodyHash;
      if (!same && !quirks.has('ignore-amount-on-replay'))
        throw new SandboxError(
          'IDEMPOTENCY_CONFLICT',
          `${m.kind} ${m.providerTxId} was already received with a different body`,
        );
      if (same && m.kind === 'bet' && quirks.has('debit-duplicates'))
        return debitAgain(tx, m, balance, id, money);
      return { response: JSON.parse(seen.response) as Record<string, string>, replay: true };
    }
    const d = decide(m, balance, ctx, money, rules);
    if ('stored' in d) return { response: d.stored, replay: true };
    const next = balance + d.delta;
    const response = movementResponse(m, id, balance, next, money.currencies);
    // The balance and the movement in one statement.
    await tx`with balance as (
               update accounts set balance_minor = ${next}, updated_at = now()
               where user_id = ${m.userId} and currency = ${m.currency}
             )
             insert into transactions (operator_tx_id, kind, provider_tx_id, user_id, currency, linked_tx_id,
               amount_minor, delta_minor, round_id, game, mode, body_hash, response)
             values (${id}, ${m.kind}, ${m.providerTxId}, ${m.userId}, ${m.currency}, ${d.linked},
               ${m.amountMinor}, ${d.delta}, ${m.roundId}, ${m.game}, ${m.mode}, ${m.bodyHash},
               ${JSON.stringify(response)})`;
    return { response, replay: false };
  });
}

/**
 * Applies a money callback exactly once per (kind, provider_tx_id) and returns its answer.
 * Two first sights of one id on two different accounts race on the unique key; the loser is run
 * again once and then meets the winner's row (IDEMPOTENCY_CONFLICT, the bodies differ). A new
 * account starts at `money.initialMinor(currency)`; balances are answered in the currency's precision.
 * `rules.quirks` (quirks.ts) are the rules switched off (NO_QUIRKS for a sandbox that keeps them
 * all); `rules.strict` (mode.ts) refuses a free bet's win without its registered free bet.
 * @throws SandboxError for every refusal; nothing is written then.
 */
export async function applyMovement(
  sql: Sql,
  m: Movement,
  money: LedgerMoney,
  rules: LedgerRules,
): Promise<MovementResult> {
  return pRetry(() => applyOnce(sql, m, money, rules), {
    retries: 1,
    minTimeout: 0,
    shouldRetry: (err) => (err as { code?: string }).code === '23505',
  });
}

/**
 * The balance callback: the account (created at first sight) as the contract's answer, `balance` a
 * decimal string in the currency's precision ("100.00" USD, "10000" JPY).
 */
export async function readBalance(
  sql: Sql,
  r: BalanceRequest,
  money: LedgerMoney,
): Promise<Record<string, string>> {
  await sql`insert into accounts (user_id, currency, balance_minor) values (${r.userId}, ${r.currency}, ${money.initialMinor(r.currency)})
            on conflict do nothing`;
  const [row] =
    await sql`select balance_minor from accounts where user_id = ${r.userId} and currency = ${r.currency}`;
  return balanceResponse(r, Number(row?.balance_minor), money.currencies);
}
