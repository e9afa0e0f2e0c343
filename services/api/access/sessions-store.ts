/**
 * Postgres side of the player sessions (migration 003 `access_sessions`, `free_bets`; the
 * `wallet_transactions` read model), for the routes of sessions.ts, play.ts and
 * request-access.ts. Each function is one statement outside any transaction, so what it writes is
 * all or nothing. Times are Dates of the caller's clock.
 */
import type { Sql } from '../../../lib/db/pool.ts';
import type { SessionCreated } from '../../../lib/log/wallet-events.ts';

/** A wallet_transactions row as a session's transaction list shows it. */
export interface SessionTxRow {
  tx_id: string;
  kind: string;
  round_id: string;
  requested_at: Date;
  status: string;
  amount_minor: string;
  round_status: string;
  currency: string;
}

/** Whether session `sessionId` exists and belongs to operator `operatorId`. */
export async function isSessionOf(sql: Sql, sessionId: string, operatorId: string): Promise<boolean> {
  const [s] = await sql`
    select 1 from access_sessions where session_id = ${sessionId} and operator_id = ${operatorId}`;
  return s !== undefined;
}

/**
 * One page of a session's transactions, in the order they were requested (then by tx_id), and
 * how many it has in all (two statements, not one snapshot: the total may count a row the page
 * was read before).
 */
export async function sessionTransactions(
  sql: Sql,
  sessionId: string,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: SessionTxRow[] }> {
  const [{ n } = { n: '0' }] = await sql<{ n: string }[]>`
    select count(*) as n from wallet_transactions where session_id = ${sessionId}`;
  const rows = await sql<SessionTxRow[]>`
    select tx_id, kind, round_id, requested_at, status, amount_minor, round_status, currency
    from wallet_transactions where session_id = ${sessionId}
    order by requested_at, tx_id limit ${page.limit} offset ${page.offset}`;
  return { total: Number(n), rows };
}

/** A session as GET /sessions/active lists it. */
export interface ActiveSessionRow {
  session_id: string;
  game: string;
  user_id: string;
  username: string;
  currency: string;
  demo: boolean;
  created_at: Date;
  opened_at: Date;
}

/** Operator `operatorId`'s sessions not ended and opened after `openedAfter`, latest first, at most 1000. */
export async function activeSessions(
  sql: Sql,
  operatorId: string,
  openedAfter: Date,
): Promise<ActiveSessionRow[]> {
  return await sql<ActiveSessionRow[]>`
    select session_id, game, user_id, username, currency, demo or demo_session as demo, created_at, opened_at
    from access_sessions
    where operator_id = ${operatorId} and ended_at is null and opened_at > ${openedAfter}
    order by opened_at desc limit 1000`;
}

/** A grant of free bets to insert (minor units of `currency`). */
export interface FreeBetGrant {
  readonly operatorId: string;
  readonly userId: string;
  readonly game: string;
  readonly currency: string;
  readonly valueMinor: number;
  readonly quantity: number;
  readonly bonusCode: string | null;
  readonly expiresAt: Date;
}

/** Inserts a grant into `free_bets` with all of its quantity left. @returns its id and creation time. */
export async function insertFreeBetGrant(
  sql: Sql,
  g: FreeBetGrant,
): Promise<{ grant_id: string; created_at: Date } | undefined> {
  const [row] = await sql<{ grant_id: string; created_at: Date }[]>`
    insert into free_bets (operator_id, user_id, game, currency, value_minor, quantity, quantity_left,
                           bonus_code, expires_at)
    values (${g.operatorId}, ${g.userId}, ${g.game}, ${g.currency}, ${g.valueMinor},
            ${g.quantity}, ${g.quantity}, ${g.bonusCode}, ${g.expiresAt})
    returning grant_id, created_at`;
  return row;
}

/** A session as POST /play/open shows it to the player. */
export interface OpenedRow {
  session_id: string;
  game: string;
  user_id: string;
  username: string;
  currency: string;
  demo: boolean;
  lang: string | null;
  avatar_url: string | null;
}

/**
 * Consumes the launch code whose SHA-256 is `launchHash`: one conditional update (`opened_at is
 * null`, not expired at `at`), so of two simultaneous opens exactly one gets the row; stores
 * `playerTokenHash`. @returns the opened session, or undefined when the code is unknown, used or expired.
 */
export async function openLaunch(
  sql: Sql,
  launchHash: string,
  playerTokenHash: string,
  at: Date,
): Promise<OpenedRow | undefined> {
  const [s] = await sql<OpenedRow[]>`
    update access_sessions set opened_at = ${at}, player_token_hash = ${playerTokenHash}
    where launch_hash = ${launchHash} and opened_at is null and expires_at > ${at}
    returning session_id, game, user_id, username, currency, demo or demo_session as demo, lang, avatar_url`;
  return s;
}

/** When the session of launch code hash `launchHash` was opened (null: not yet); undefined when there is none. */
export async function launchOpenedAt(
  sql: Sql,
  launchHash: string,
): Promise<{ opened_at: Date | null } | undefined> {
  const [x] = await sql<{ opened_at: Date | null }[]>`
    select opened_at from access_sessions where launch_hash = ${launchHash}`;
  return x;
}

/** Gives a launch code back (undoes {@link openLaunch}) if the session still holds `playerTokenHash`. */
export async function reopenLaunch(sql: Sql, sessionId: string, playerTokenHash: string): Promise<void> {
  await sql`
    update access_sessions set opened_at = null, player_token_hash = null
    where session_id = ${sessionId} and player_token_hash = ${playerTokenHash}`;
}

/** A wallet_transactions row as GET /play/bets/:tx_id shows it. */
export interface BetTxRow {
  tx_id: string;
  bet_tx_id: string;
  kind: string;
  status: string;
  round_status: string;
  round_id: string;
  amount_minor: string;
  currency: string;
  mode: string;
  requested_at: Date;
  updated_at: Date;
  new_balance: string | null;
  detail: string | null;
}

/** The transactions of bet `betTxId` (its debit, win, rollback …) of session `sessionId`, by tx_id. */
export async function betTransactions(sql: Sql, betTxId: number, sessionId: string): Promise<BetTxRow[]> {
  return await sql<BetTxRow[]>`
    select tx_id, bet_tx_id, kind, status, round_status, round_id, amount_minor, currency, mode, requested_at,
           updated_at, new_balance, detail
    from wallet_transactions
    where bet_tx_id = ${betTxId} and session_id = ${sessionId}
    order by tx_id`;
}

/** Inserts the session of `event` with its `sessionToken` and the SHA-256 of its launch code. */
export async function insertSession(
  sql: Sql,
  event: SessionCreated,
  sessionToken: string,
  launchHash: string,
): Promise<void> {
  await sql`
    insert into access_sessions (session_id, operator_id, game, user_id, username, avatar_url, lang,
      currency, balance_minor, extra_data, demo, demo_session, session_token, launch_hash,
      expires_at, created_at)
    values (${event.session_id}, ${event.operator_id}, ${event.game}, ${event.user_id},
      ${event.username}, ${event.avatar_url}, ${event.lang}, ${event.currency}, ${event.balance_minor},
      ${event.extra_data}, ${event.demo}, ${event.demo_session}, ${sessionToken}, ${launchHash},
      ${new Date(event.expires_at)}, ${new Date(event.created_at)})`;
}

/** Deletes session `sessionId` (its SessionCreated could not be appended). */
export async function deleteSession(sql: Sql, sessionId: string): Promise<void> {
  await sql`delete from access_sessions where session_id = ${sessionId}`;
}
