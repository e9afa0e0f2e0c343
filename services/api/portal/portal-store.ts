/**
 * Postgres reads of the portal beside lib/db/wallet-callbacks.ts: what the callbacks list needs
 * of a callback's job (its round), the operator's most recent player (the test callback's), and
 * the reconciliation's rows of the wallet_transactions read model (migration 003, 008). Every
 * statement is scoped to one operator.
 */
import type { Sql } from '../../../lib/db/pool.ts';

/** At most this many callbacks of one round are looked at (a round has one bet per player, and its win or close). */
const ROUND_CALLBACKS_MAX = 1000;

/**
 * The provider_tx_ids of operator `operatorId`'s callbacks on round `roundId` (the round of the
 * bet in the callback's job), at most 1000.
 * @throws the postgres.js error.
 */
export async function callbackIdsOfRound(sql: Sql, operatorId: string, roundId: number): Promise<number[]> {
  const rows = await sql<{ tx_id: string }[]>`
    select tx_id::text from wallet_callbacks
    where operator_id = ${operatorId} and job -> 'bet' ->> 'round_id' = ${String(roundId)}
    order by tx_id limit ${ROUND_CALLBACKS_MAX}`;
  return rows.map((r) => Number(r.tx_id));
}

/**
 * The round of each of `txIds` (the bet's round in the callback's job), when it has one.
 * @throws the postgres.js error.
 */
export async function roundsOfCallbacks(sql: Sql, txIds: readonly number[]): Promise<Map<number, number>> {
  if (txIds.length === 0) return new Map();
  const rows = await sql<{ tx_id: string; round_id: string | null }[]>`
    select tx_id::text, job -> 'bet' ->> 'round_id' as round_id from wallet_callbacks
    where tx_id = any(${txIds.map(String)}::bigint[])`;
  const out = new Map<number, number>();
  for (const r of rows) if (r.round_id !== null) out.set(Number(r.tx_id), Number(r.round_id));
  return out;
}

/** A player as a balance request names them. */
export interface PlayerRef {
  readonly user_id: string;
  readonly currency: string;
  readonly session_token: string;
}

/**
 * The real-money player of operator `operatorId` whose session was granted last, or undefined
 * when it has none.
 * @throws the postgres.js error.
 */
export async function latestPlayer(sql: Sql, operatorId: string): Promise<PlayerRef | undefined> {
  const [r] = await sql<PlayerRef[]>`
    select user_id, currency, session_token from access_sessions
    where operator_id = ${operatorId} and not demo and not demo_session
    order by created_at desc limit 1`;
  return r;
}

/** One transaction of the reconciliation, as read. */
export interface LedgerRow {
  readonly tx_id: string;
  readonly kind: 'bet' | 'win' | 'rollback' | 'close';
  readonly bet_tx_id: string;
  readonly user_id: string;
  readonly round_id: string;
  readonly game: string;
  readonly amount_minor: string;
  readonly currency: string;
  readonly status: 'pending' | 'succeeded' | 'rejected' | 'failed' | 'parked';
  readonly requested_at: Date;
  readonly updated_at: Date;
}

/**
 * Every real-money wallet transaction of operator `operatorId` requested on the UTC day starting
 * at `dayStartMs` (Unix ms of 00:00 UTC), oldest first (then by tx id). Demo transactions move
 * no operator money and are left out.
 * @throws the postgres.js error.
 */
export async function ledgerOfDay(sql: Sql, operatorId: string, dayStartMs: number): Promise<LedgerRow[]> {
  return await sql<LedgerRow[]>`
    select tx_id::text, kind, bet_tx_id::text, user_id, round_id::text, game, amount_minor::text, currency,
           status, requested_at, updated_at
    from wallet_transactions
    where operator_id = ${operatorId} and not demo
      and requested_at >= ${new Date(dayStartMs)} and requested_at < ${new Date(dayStartMs + 86_400_000)}
    order by requested_at, tx_id`;
}
