/**
 * Postgres side of the portal's sign-in (migration 015: portal_links, portal_sessions). Each
 * function is one statement, so what it writes is all or nothing; times are the database's `now()`.
 * Only SHA-256 hashes of the link token and of the session id are stored (lib/auth/secrets.ts sha256).
 */
import type { Sql } from '../../../lib/db/pool.ts';

/** A portal session as the routes need it. */
export interface PortalSession {
  readonly operator_id: string;
  /** The operator's display name. */
  readonly name: string;
  readonly csrf_token: string;
  readonly expires_at: Date;
}

/**
 * Stores a link for the enabled operator `operatorId`, valid `ttlS` seconds from now.
 * @returns its expiry, or undefined when there is no such enabled operator (nothing stored).
 * @throws the postgres.js error.
 */
export async function insertLink(
  sql: Sql,
  tokenHash: string,
  operatorId: string,
  ttlS: number,
): Promise<Date | undefined> {
  const [r] = await sql<{ expires_at: Date }[]>`
    insert into portal_links (token_hash, operator_id, expires_at)
    select ${tokenHash}, operator_id, now() + make_interval(secs => ${ttlS})
    from operators where operator_id = ${operatorId} and disabled_at is null
    returning expires_at`;
  return r?.expires_at;
}

/**
 * Spends the link of `tokenHash` and opens a session in the same statement: the link must be
 * unused, unexpired and its operator enabled; it is marked used by a conditional update, so a
 * second exchange (even a simultaneous one) finds nothing.
 * @returns the new session, lasting `ttlS` seconds, or undefined when the link is unknown, used or
 *   expired (nothing written).
 * @throws the postgres.js error.
 */
export async function spendLink(
  sql: Sql,
  tokenHash: string,
  session: { hash: string; csrfToken: string; ttlS: number },
): Promise<PortalSession | undefined> {
  const [r] = await sql<PortalSession[]>`
    with spent as (
      update portal_links l set used_at = now()
      from operators o
      where l.token_hash = ${tokenHash} and l.used_at is null and l.expires_at > now()
        and o.operator_id = l.operator_id and o.disabled_at is null
      returning l.operator_id, o.name
    ), opened as (
      insert into portal_sessions (session_hash, operator_id, csrf_token, expires_at)
      select ${session.hash}, operator_id, ${session.csrfToken}, now() + make_interval(secs => ${session.ttlS})
      from spent
      returning operator_id, csrf_token, expires_at
    )
    select opened.operator_id, spent.name, opened.csrf_token, opened.expires_at
    from opened join spent using (operator_id)`;
  return r;
}

/**
 * The open, unexpired session of `sessionHash` whose operator is still enabled, or undefined.
 * @throws the postgres.js error.
 */
export async function sessionOf(sql: Sql, sessionHash: string): Promise<PortalSession | undefined> {
  const [r] = await sql<PortalSession[]>`
    select s.operator_id, o.name, s.csrf_token, s.expires_at
    from portal_sessions s join operators o using (operator_id)
    where s.session_hash = ${sessionHash} and s.ended_at is null and s.expires_at > now()
      and o.disabled_at is null`;
  return r;
}

/** Ends the session of `sessionHash` (sign-out); nothing when it is already ended. @throws the postgres.js error. */
export async function endSession(sql: Sql, sessionHash: string): Promise<void> {
  await sql`update portal_sessions set ended_at = now() where session_hash = ${sessionHash} and ended_at is null`;
}
