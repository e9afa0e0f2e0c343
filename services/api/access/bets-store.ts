/**
 * Postgres side of the player's bets (migrations 004 `access_round_bets`, 006 `play_bets`,
 * `free_bets`, `free_bet_redemptions`), for POST /play/bets (bets.ts) and its cash-out
 * (cash-out.ts). Each function is one statement outside any transaction, so what it writes is all
 * or nothing; a bet's writes are given back one by one when its append fails (bets.ts). Amounts
 * are minor units; ids of the bet are its tx_id (rules/money/money.ts betTxId).
 */
import type { Sql } from '../../../lib/db/pool.ts';
import type { PlayerSession } from './guards.ts';

/** The session's fields a bet's rows are keyed by. */
type BetPlayer = Pick<PlayerSession, 'operator_id' | 'user_id' | 'game' | 'currency'>;

/** One free bet taken from a grant: the grant, its stake (minor units) and bonus code. */
export interface TakenGrant {
  readonly grantId: string;
  readonly valueMinor: number;
  readonly bonusCode: string | null;
}

/**
 * Takes one free bet of the player's grants for the session's game and currency, the soonest to
 * expire first, not expired at `at`: a conditional decrement of quantity_left (FOR UPDATE SKIP
 * LOCKED), so concurrent bets never take the last one twice.
 * @returns the grant taken, or undefined when none is left.
 */
export async function takeFreeBet(sql: Sql, s: BetPlayer, at: Date): Promise<TakenGrant | undefined> {
  const [g] = await sql<{ grant_id: string; value_minor: string; bonus_code: string | null }[]>`
    update free_bets set quantity_left = quantity_left - 1
    where grant_id = (
      select grant_id from free_bets
      where operator_id = ${s.operator_id} and user_id = ${s.user_id} and game = ${s.game}
        and currency = ${s.currency} and quantity_left > 0 and expires_at > ${at}
      order by expires_at, grant_id limit 1 for update skip locked)
      and quantity_left > 0
    returning grant_id, value_minor, bonus_code`;
  return g ? { grantId: g.grant_id, valueMinor: Number(g.value_minor), bonusCode: g.bonus_code } : undefined;
}

/** Gives back the free bet {@link takeFreeBet} took from grant `grantId`. */
export async function returnFreeBet(sql: Sql, grantId: string): Promise<void> {
  await sql`update free_bets set quantity_left = quantity_left + 1 where grant_id = ${grantId}`;
}

/**
 * Counts one more bet of the player in round `roundId` (the atomic per-(operator, user, round)
 * counter) and draws the next value of wallet_tx_seq in the same statement.
 * @returns `bets`: the bet's count_register; `seq`: the sequence value its tx_id is made from.
 */
export async function countBet(
  sql: Sql,
  s: Pick<PlayerSession, 'operator_id' | 'user_id'>,
  roundId: number,
): Promise<{ bets: number; seq: string } | undefined> {
  const [c] = await sql<{ bets: number; seq: string }[]>`
    insert into access_round_bets (operator_id, user_id, round_id, bets)
    values (${s.operator_id}, ${s.user_id}, ${roundId}, 1)
    on conflict (operator_id, user_id, round_id) do update set bets = access_round_bets.bets + 1
    returning bets, nextval('wallet_tx_seq') as seq`;
  return c;
}

/** Takes back one bet of the player's count in round `roundId` (undoes {@link countBet}; the sequence value is skipped). */
export async function uncountBet(
  sql: Sql,
  s: Pick<PlayerSession, 'operator_id' | 'user_id'>,
  roundId: number,
): Promise<void> {
  await sql`
    update access_round_bets set bets = bets - 1
    where operator_id = ${s.operator_id} and user_id = ${s.user_id} and round_id = ${roundId}`;
}

/** Records that bet `txId` redeems grant `grantId`, so a refused or cancelled free bet is returned (free-bet-returns.ts). */
export async function insertRedemption(sql: Sql, txId: number, grantId: string): Promise<void> {
  await sql`insert into free_bet_redemptions (tx_id, grant_id) values (${txId}, ${grantId})`;
}

/** Deletes the redemption of bet `txId` (its BetPlaced was not appended). */
export async function deleteRedemption(sql: Sql, txId: number): Promise<void> {
  await sql`delete from free_bet_redemptions where tx_id = ${txId}`;
}

/** A bet accepted on the log, kept for its cash-out. */
export interface PlayBet {
  readonly txId: number;
  readonly sessionId: string;
  readonly game: string;
  readonly roundId: number;
  readonly amountMinor: number;
  /** Crash only: the auto cash-out multiplier (decimal string), or null. */
  readonly autoCashout: string | null;
  readonly placedAt: Date;
}

/** Inserts an accepted bet into play_bets. */
export async function insertPlayBet(sql: Sql, b: PlayBet): Promise<void> {
  await sql`
    insert into play_bets (tx_id, session_id, game, round_id, amount_minor, auto_cashout, placed_at)
    values (${b.txId}, ${b.sessionId}, ${b.game}, ${b.roundId}, ${b.amountMinor},
            ${b.autoCashout}, ${b.placedAt})`;
}

/** A play_bets row as the cash-out reads it. */
export interface PlayBetRow {
  tx_id: string;
  game: string;
  round_id: string;
  amount_minor: string;
  auto_cashout: string | null;
  cash_out: 'pending' | 'accepted' | 'crashed' | null;
  cash_out_multiplier: string | null;
}

/** Bet `txId` of session `sessionId`; undefined when the session has no such bet. */
export async function playBetOf(sql: Sql, txId: number, sessionId: string): Promise<PlayBetRow | undefined> {
  const [bet] = await sql<PlayBetRow[]>`
    select tx_id, game, round_id, amount_minor, auto_cashout, cash_out, cash_out_multiplier
    from play_bets where tx_id = ${txId} and session_id = ${sessionId}`;
  return bet;
}

/**
 * Claims bet `txId` for a cash-out (cash_out null → pending), one conditional update, so of two
 * simultaneous requests exactly one gets it. @returns whether this call claimed it.
 */
export async function claimCashOut(sql: Sql, txId: number): Promise<boolean> {
  const claimed = await sql`
    update play_bets set cash_out = 'pending' where tx_id = ${txId} and cash_out is null returning tx_id`;
  return claimed.length > 0;
}

/** Gives up the claim of {@link claimCashOut} (the engine could not be asked): pending → null. */
export async function releaseCashOut(sql: Sql, txId: number): Promise<void> {
  await sql`update play_bets set cash_out = null where tx_id = ${txId} and cash_out = 'pending'`;
}

/** Records that bet `txId` crashed before its cash-out. */
export async function markCrashed(sql: Sql, txId: number): Promise<void> {
  await sql`update play_bets set cash_out = 'crashed' where tx_id = ${txId}`;
}

/** Records the engine's accepted cash-out of bet `txId`: its multiplier (decimal string) and time. */
export async function markCashedOut(sql: Sql, txId: number, multiplier: string, at: Date): Promise<void> {
  await sql`
    update play_bets set cash_out = 'accepted', cash_out_multiplier = ${multiplier},
      cashed_out_at = ${at}
    where tx_id = ${txId}`;
}

/** A bet of the round as GET /play/round shows it (ids and amounts as text: no precision lost). */
export interface RoundBetRow {
  tx_id: string;
  amount_minor: string;
  auto_cashout: string | null;
  cash_out: string | null;
  cash_out_multiplier: string | null;
}

/** The bets of session `sessionId` in round `roundId`, by tx_id. */
export async function roundBetsOf(sql: Sql, sessionId: string, roundId: number): Promise<RoundBetRow[]> {
  return await sql<RoundBetRow[]>`
    select tx_id::text, amount_minor::text, auto_cashout, cash_out, cash_out_multiplier from play_bets
    where session_id = ${sessionId} and round_id = ${roundId} order by tx_id`;
}
