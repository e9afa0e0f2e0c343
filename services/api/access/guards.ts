/**
 * Who is calling the session API: an admin (an admin-scoped API key, checked
 * exactly as /api/auth/keys checks it), an operator (`Authorization: Bearer op_…`, looked up by
 * SHA-256 among enabled operators) or a player (`Authorization: Bearer pt_…` from POST /play/open).
 * Each check throws AuthError (401/403), answered as problem JSON by the access routes.
 */
import type { FastifyRequest } from 'fastify';
import { credentialFromHeaders } from '../../../lib/auth/credentials.ts';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import { bearerOf, sha256 } from '../../../lib/auth/secrets.ts';
import { authenticate } from '../../../lib/auth/verifier.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { RetryPolicy } from '../../../rules/retry/schedule.ts';
import type { RoundClose } from '../../../rules/wallet/bodies.ts';
import { AuthError } from '../errors.ts';

/** How long an opened player session lasts (docs/decisions/rest-api/0005-session-api.md), ms. */
export const PLAY_TTL_MS = 12 * 3600 * 1000;

/** An operator row as stored in `operators` (signing secret included: the caller must not leak it). */
export interface OperatorRow {
  readonly operator_id: string;
  readonly name: string;
  readonly callback_form: 'A' | 'B';
  readonly base_url: string;
  readonly bet_path: string;
  readonly win_path: string;
  readonly balance_path: string;
  readonly rollback_path: string;
  readonly signing_secret: string;
  /**
   * Migration 017: the secret a rotation replaced and until when it still signs (null when none).
   * Required, so code that lists the columns it signs with cannot leave them out.
   */
  readonly previous_signing_secret: string | null;
  readonly previous_secret_valid_until: Date | null;
  readonly timeout_ms: number;
  /** rules/retry/schedule.ts RetryPolicy: a schedule or the exponential shape. */
  readonly retry_policy: RetryPolicy;
  /** rules/wallet/answers.ts: a preset name or a preset with codes. */
  readonly answer_table: unknown;
  readonly round_close: RoundClose;
  readonly round_end_path: string | null;
  readonly amount_format: 'string' | 'number';
  /** The last readiness probe (rules/wallet/readiness.ts Readiness), or null; and its verdict. */
  readonly readiness: unknown;
  readonly ready: boolean;
  readonly created_at: Date;
  readonly disabled_at: Date | null;
}

/** An opened session as the player routes need it. */
export interface PlayerSession {
  readonly session_id: string;
  readonly operator_id: string;
  readonly game: string;
  readonly user_id: string;
  readonly username: string;
  readonly currency: string;
  readonly demo: boolean;
  readonly session_token: string;
  /** Starting balance the operator passed (demo: the virtual start), minor units. */
  readonly balance_minor: number | null;
}

/** @throws AuthError 401 (missing/invalid/revoked key) or 403 (key without `admin`). */
export function requireAdmin(table: KeyLookup, req: FastifyRequest, now: number): void {
  const r = authenticate(table, {
    credential: credentialFromHeaders(req.headers),
    origin: req.headers.origin,
    now,
    scope: 'admin',
  });
  if (!r.ok) throw new AuthError(r.status, r.reason, r.message);
}

function bearer(req: FastifyRequest, prefix: string): string {
  const header = req.headers.authorization;
  if (header === undefined || header === '')
    throw new AuthError(401, 'missing', 'Authorization: Bearer <token> is required');
  const token = bearerOf(header);
  if (token === undefined || !token.startsWith(prefix) || token.length > 200)
    throw new AuthError(401, 'malformed', `the bearer is not a ${prefix} token`);
  return token;
}

/** The enabled operator of the request's bearer. @throws AuthError 401 */
export async function requireOperator(sql: Sql, req: FastifyRequest): Promise<OperatorRow> {
  const hash = sha256(bearer(req, 'op_'));
  const [op] = await sql<OperatorRow[]>`
    select * from operators where token_hash = ${hash} and disabled_at is null`;
  if (!op) throw new AuthError(401, 'unknown', 'no enabled operator has this token');
  return op;
}

/** The open, unexpired session of the request's player bearer. @throws AuthError 401 */
export async function requirePlayer(sql: Sql, req: FastifyRequest, now: number): Promise<PlayerSession> {
  const hash = sha256(bearer(req, 'pt_'));
  const [s] = await sql<(PlayerSession & { balance_minor: string | null })[]>`
    select session_id, operator_id, game, user_id, username, currency, demo or demo_session as demo,
           session_token, balance_minor
    from access_sessions
    where player_token_hash = ${hash} and ended_at is null
      and opened_at > ${new Date(now - PLAY_TTL_MS)}`;
  if (!s) throw new AuthError(401, 'unknown', 'no open session has this token (ended or expired)');
  return { ...s, balance_minor: s.balance_minor === null ? null : Number(s.balance_minor) };
}
