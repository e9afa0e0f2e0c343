/**
 * Ops access to the wallet saga's durable callbacks (wallet_callbacks, migration 008; what ops needs:
 * "list, inspect and re-drive parked and in-retry callbacks by operator, player, time
 * range or tx id"). Used by `npm run dead-letters -- callbacks …` (services/dead-letters) and the
 * admin API's /admin/wallet/callbacks (services/api/access/wallet-callbacks.ts); the saga's
 * dispatcher picks re-driven callbacks up like any due one. Nothing here validates input: callers
 * pass checked values (a limit outside 1..1000 is clamped).
 *
 * Re-driving sets a parked or in-retry callback due now with its attempts counted from 0 again (a
 * fresh schedule, and pulling forward allowed again: migration 014); it keeps its provider_tx_id,
 * webhook-id and body, so an operator that already booked it answers with its first answer (or
 * "duplicate") and no money moves twice. A callback that is done, skipped or in flight is never
 * re-driven.
 *
 * Every attempt of a callback (wallet_callback_attempts, migration 016, written by the saga with
 * each result) is read by `listAttempts`; `callbackStats` sums them per minute for the operator
 * portal's overview.
 */
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import { CONNECTION_ERROR_PREFIX } from '../http/callback-client.ts';
import type { Sql } from './pool.ts';

export type CallbackStatus = 'due' | 'in_flight' | 'done' | 'parked' | 'skipped';
export const CALLBACK_STATUSES: readonly CallbackStatus[] = ['due', 'in_flight', 'done', 'parked', 'skipped'];

/**
 * A status of a filter: a stored status, `retrying` (due with at least one attempt), `waiting`
 * (parked or retrying: what ops look at) or `any`.
 */
export type CallbackStatusFilter = CallbackStatus | 'retrying' | 'waiting' | 'any';
/** Every status a filter takes, the default first. */
export const CALLBACK_STATUS_FILTERS = [
  'waiting',
  'parked',
  'retrying',
  'due',
  'in_flight',
  'done',
  'skipped',
  'any',
] as const satisfies readonly CallbackStatusFilter[];
/** The statuses a re-drive takes (the others are never re-driven). */
export const REDRIVE_STATUSES = ['waiting', 'parked', 'retrying'] as const;
/** Rows of one list or re-drive: at most `max`, `list` by default. */
export const CALLBACK_LIMITS = { list: 100, max: 1000 } as const;

/** Which callbacks: every given field must match. Times are Unix ms of the last change. */
export interface CallbackFilter {
  /** Default: parked and in retry (due with at least one attempt). */
  readonly status?: CallbackStatusFilter;
  readonly operatorId?: string;
  readonly userId?: string;
  readonly txId?: number;
  /** Any of these provider_tx_ids (with `txId`: both must match). */
  readonly txIds?: readonly number[];
  /** Last change at or after, Unix ms. */
  readonly from?: number;
  /** Last change before, Unix ms. */
  readonly to?: number;
  /** At most this many rows, newest change first (1..1000, default 100). */
  readonly limit?: number;
}

/**
 * Whether `f` names which callbacks (operator, player, tx id or time); a status alone does not.
 * The command line and the admin API refuse a re-drive without one unless asked for all.
 */
export function hasSelection(f: CallbackFilter): boolean {
  return (
    f.operatorId !== undefined ||
    f.userId !== undefined ||
    f.txId !== undefined ||
    (f.txIds !== undefined && f.txIds.length > 0) ||
    f.from !== undefined ||
    f.to !== undefined
  );
}

/** One callback as ops see it. */
export interface CallbackView {
  readonly tx_id: number;
  readonly kind: CallbackJob['kind'];
  readonly bet_tx_id: number;
  readonly operator_id: string;
  readonly user_id: string;
  readonly status: CallbackStatus;
  readonly attempts: number;
  /** Unix ms; for a due callback, when it is tried next. */
  readonly next_attempt_at: number;
  readonly created_at: number;
  readonly updated_at: number;
  readonly leased_by: string | null;
  readonly last_answer: string | null;
  readonly last_code: string | null;
  readonly last_error: string | null;
  /** The last request body sent and the operator's answer (excerpts), for `show`. */
  readonly last_request: string | null;
  readonly last_response: string | null;
  readonly amount_minor: number;
  readonly currency: string;
}

interface Row {
  tx_id: string;
  kind: CallbackJob['kind'];
  bet_tx_id: string;
  operator_id: string;
  user_id: string;
  status: CallbackStatus;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
  updated_at: string;
  leased_by: string | null;
  last_answer: string | null;
  last_code: string | null;
  last_error: string | null;
  last_request: string | null;
  last_response: string | null;
  job: unknown;
  player_key: string;
  seq: string;
  lease_until: string | null;
}

const jobOf = (r: Row) => (typeof r.job === 'string' ? JSON.parse(r.job) : r.job) as CallbackJob;

const view = (r: Row): CallbackView => {
  const job = jobOf(r);
  return {
    tx_id: Number(r.tx_id),
    kind: r.kind,
    bet_tx_id: Number(r.bet_tx_id),
    operator_id: r.operator_id,
    user_id: r.user_id,
    status: r.status,
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    leased_by: r.leased_by,
    last_answer: r.last_answer,
    last_code: r.last_code,
    last_error: r.last_error,
    last_request: r.last_request,
    last_response: r.last_response,
    amount_minor: job.amountMinor,
    currency: job.bet.currency,
  };
};

/** The SQL condition of `f` (status default: parked and retrying). */
function where(sql: Sql, f: CallbackFilter) {
  const status = f.status ?? 'waiting';
  const byStatus =
    status === 'any'
      ? sql`true`
      : status === 'retrying'
        ? sql`(status = 'due' and attempts > 0)`
        : status === 'waiting'
          ? sql`(status = 'parked' or (status = 'due' and attempts > 0))`
          : sql`status = ${status}`;
  const ids = f.txIds ? f.txIds.map(String) : null;
  return sql`${byStatus}
    and (${f.operatorId ?? null}::text is null or operator_id = ${f.operatorId ?? null})
    and (${f.userId ?? null}::text is null or user_id = ${f.userId ?? null})
    and (${f.txId ?? null}::bigint is null or tx_id = ${f.txId ?? null})
    and (${ids}::bigint[] is null or tx_id = any(${ids}::bigint[]))
    and (${f.from ?? null}::bigint is null or updated_at >= ${f.from ?? null})
    and (${f.to ?? null}::bigint is null or updated_at < ${f.to ?? null})`;
}

/** The rows matching `f`, newest change first, at most `limit`. */
function rows(sql: Sql, f: CallbackFilter, limit: number) {
  return sql<Row[]>`
    select tx_id::text, kind, bet_tx_id::text, operator_id, user_id, status, attempts, next_attempt_at::text,
           created_at::text, updated_at::text, leased_by, last_answer, last_code, last_error,
           last_request, last_response, job, player_key, seq::text, lease_until::text
    from wallet_callbacks where ${where(sql, f)}
    order by updated_at desc, tx_id desc limit ${limit}`;
}

/** The callbacks matching `f`, newest change first. @throws the postgres.js error. */
export async function listCallbacks(sql: Sql, f: CallbackFilter = {}): Promise<CallbackView[]> {
  const limit = Math.min(Math.max(f.limit ?? CALLBACK_LIMITS.list, 1), CALLBACK_LIMITS.max);
  return (await rows(sql, f, limit)).map(view);
}

/** One callback with what `show` adds to the list's fields. */
export interface CallbackDetail extends CallbackView {
  /** What the saga sends: kind, tx ids, amount in minor units and the bet's context (rules/wallet/bodies.ts). */
  readonly job: CallbackJob;
  /** `operator_id:user_id`; debits of one player go in `seq` order. */
  readonly player_key: string;
  readonly seq: number;
  /** Unix ms until which `leased_by` holds it (in flight), else null. */
  readonly lease_until: number | null;
}

/** One callback by its provider_tx_id, or undefined. @throws the postgres.js error. */
export async function getCallback(sql: Sql, txId: number): Promise<CallbackDetail | undefined> {
  const [r] = await rows(sql, { status: 'any', txId }, 1);
  if (!r) return undefined;
  return {
    ...view(r),
    job: jobOf(r),
    player_key: r.player_key,
    seq: Number(r.seq),
    lease_until: r.lease_until === null ? null : Number(r.lease_until),
  };
}

const TIME_KEYS = ['next_attempt_at', 'created_at', 'updated_at', 'lease_until'] as const;
type TimeKey = (typeof TIME_KEYS)[number];

/** A callback as JSON for people and the admin API: its Unix ms times as ISO 8601 strings. */
export type CallbackJson<C extends CallbackView = CallbackView> = {
  readonly [K in keyof C]: K extends TimeKey ? (null extends C[K] ? string | null : string) : C[K];
};

/** `c` (a view or a detail) with ISO 8601 times. */
export function callbackJson<C extends CallbackView>(c: C): CallbackJson<C> {
  const out: Record<string, unknown> = { ...(c as object) };
  for (const k of TIME_KEYS) {
    const ms = out[k];
    if (typeof ms === 'number') out[k] = new Date(ms).toISOString();
  }
  return out as unknown as CallbackJson<C>;
}

/**
 * Re-drives the parked or retrying callbacks matching `f` (status default: both; `due` without
 * attempts, `done`, `skipped` and `in_flight` are never touched): due at `now` with a fresh
 * schedule. `dryRun` only lists them.
 * @returns the callbacks re-driven (or that would be).
 * @throws the postgres.js error.
 */
export async function redriveCallbacks(
  sql: Sql,
  f: CallbackFilter,
  now: number,
  dryRun = false,
): Promise<CallbackView[]> {
  const status = f.status ?? 'waiting';
  if (!(REDRIVE_STATUSES as readonly string[]).includes(status)) return [];
  const matching = await listCallbacks(sql, { ...f, status, limit: f.limit ?? CALLBACK_LIMITS.max });
  if (dryRun || matching.length === 0) return matching;
  const ids = matching.map((c) => String(c.tx_id));
  const rows = await sql<{ tx_id: string }[]>`
    update wallet_callbacks set status = 'due', attempts = 0, next_attempt_at = ${now},
      pulled_forward_at = null, lease_until = null, leased_by = null, updated_at = ${now}
    where tx_id = any(${ids}::bigint[]) and (status = 'parked' or (status = 'due' and attempts > 0))
    returning tx_id::text`;
  const done = new Set(rows.map((r) => Number(r.tx_id)));
  return matching.filter((c) => done.has(c.tx_id));
}

/**
 * One attempt of a callback as the operator portal shows it (table wallet_callback_attempts,
 * migration 016). Times are ISO 8601; `latency_ms` is ms; `class` and `code` are the answer's
 * under the operator's answer table (rules/wallet/answers.ts: ok, duplicate, mismatch,
 * unknown_transaction, refused, failed). A callback that could not be sent has a null request
 * method, url, headers and body.
 */
export interface CallbackAttemptJson {
  /** 1-based, over the callback's whole life (a re-drive does not restart it). */
  readonly attempt: number;
  readonly at: string;
  readonly request: {
    readonly method: string | null;
    readonly url: string | null;
    /** webhook-id, webhook-timestamp, webhook-signature, content-type (no secret: the signature is a MAC). */
    readonly headers: Readonly<Record<string, string>> | null;
    readonly body: string | null;
  };
  /** Null status and body: a timeout or connection error (see `error`), or never sent. */
  readonly response: { readonly status: number | null; readonly body: string | null };
  readonly latency_ms: number;
  readonly class: string;
  readonly code: string | null;
  readonly error: string | null;
  /** When the callback was due again after this attempt; null when it ended the callback. */
  readonly next_attempt_at: string | null;
}

interface AttemptRow {
  attempt: number;
  at: string;
  request_method: string | null;
  request_url: string | null;
  request_headers: unknown;
  request_body: string | null;
  response_status: number | null;
  response_body: string | null;
  latency_ms: number;
  class: string;
  code: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

const iso = (ms: string | number): string => new Date(Number(ms)).toISOString();

/** Most attempts one read returns unless asked for fewer (`readAttempts`'s default `limit`). */
export const ATTEMPTS_LIMIT = 100;

/** A bounded read of a callback's attempts: the newest `limit`, oldest first, and how many there are. */
export interface AttemptsPage {
  readonly attempts: CallbackAttemptJson[];
  /** Every recorded attempt of the callback (of the operator, when asked), read or not. */
  readonly total: number;
}

/**
 * The newest `limit` recorded attempts of callback `txId`, oldest first (newest last), and their
 * total; only when it is `operatorId`'s if given (another operator's callback then has none,
 * exactly like a missing one). A callback re-driven many times keeps every attempt; one read stays
 * bounded.
 * @param limit 1..1000 attempts (default {@link ATTEMPTS_LIMIT}).
 * @throws RangeError when `limit` is not an integer in 1..1000; the postgres.js error.
 */
export async function readAttempts(
  sql: Sql,
  txId: number,
  operatorId?: string,
  limit: number = ATTEMPTS_LIMIT,
): Promise<AttemptsPage> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new RangeError(`attempts limit must be an integer in 1..1000, got ${limit}`);
  const rows = await sql<(AttemptRow & { total: string })[]>`
    select * from (
      select attempt, at::text, request_method, request_url, request_headers, request_body, response_status,
             response_body, latency_ms, class, code, error, next_attempt_at::text, count(*) over () as total
      from wallet_callback_attempts
      where tx_id = ${txId} and (${operatorId ?? null}::text is null or operator_id = ${operatorId ?? null})
      order by attempt desc
      limit ${limit}
    ) newest
    order by attempt`;
  return { attempts: rows.map(attemptJson), total: Number(rows[0]?.total ?? 0) };
}

/**
 * The newest `limit` recorded attempts of callback `txId`, oldest first (see `readAttempts`, without
 * the total).
 * @throws RangeError when `limit` is not an integer in 1..1000; the postgres.js error.
 */
export async function listAttempts(
  sql: Sql,
  txId: number,
  operatorId?: string,
  limit: number = ATTEMPTS_LIMIT,
): Promise<CallbackAttemptJson[]> {
  return (await readAttempts(sql, txId, operatorId, limit)).attempts;
}

function attemptJson(r: AttemptRow): CallbackAttemptJson {
  return {
    attempt: Number(r.attempt),
    at: iso(r.at),
    request: {
      method: r.request_method,
      url: r.request_url,
      headers: (typeof r.request_headers === 'string'
        ? JSON.parse(r.request_headers)
        : r.request_headers) as Record<string, string> | null,
      body: r.request_body,
    },
    response: {
      status: r.response_status === null ? null : Number(r.response_status),
      body: r.response_body,
    },
    latency_ms: Number(r.latency_ms),
    class: r.class,
    code: r.code,
    error: r.error,
    next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  };
}

/** The answer classes that count as a succeeded attempt: the operator booked it (now or before). */
export const SUCCEEDED_CLASSES = ['ok', 'duplicate'] as const;

/**
 * Callback kinds whose `unknown_transaction` answer completes the callback (rules/wallet/attempt.ts
 * `afterAttempt`: nothing to refund, nothing to close), so such an attempt counts as succeeded too.
 */
export const UNKNOWN_COMPLETES_KINDS = ['rollback', 'close'] as const;

/**
 * Attempts of one minute: all, succeeded (ok or duplicate, or unknown_transaction of a rollback or
 * round close: the answers that complete the callback) and failed (any other).
 */
export interface MinuteCounts {
  /** Start of the minute, ISO 8601. */
  readonly minute: string;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** The portal overview's callback figures (the contract's `callbacks` object). */
export interface CallbackStats {
  /** Every minute that overlaps the window, oldest first, zeros included. */
  readonly per_minute: MinuteCounts[];
  /** Totals over the window (`sinceMs` to `nowMs`; the overview asks for the last hour). */
  readonly last_hour: {
    readonly total: number;
    readonly succeeded: number;
    readonly failed: number;
    /** succeeded / total, 0..1; null when there was no attempt. */
    readonly success_rate: number | null;
    /**
     * Over the attempts that left (an answer, a timeout or a connection error; not those refused
     * before sending nor those that could not be signed, 0 ms), ms (Postgres percentile_cont);
     * null when none.
     */
    readonly latency_ms: { readonly p50: number | null; readonly p99: number | null };
  };
  /** Callbacks due again after at least one attempt, now. */
  readonly retrying: number;
  /** Callbacks parked for ops, now. */
  readonly parked: number;
}

/**
 * Operator `operatorId`'s callback attempts between `sinceMs` (inclusive) and `nowMs` (exclusive),
 * Unix ms: per minute, in total, success rate and latency p50/p99; plus its callbacks retrying and
 * parked now. Three statements run at once (per minute and in total over the window's attempts,
 * by the (operator_id, at) index; the callbacks' counts); the minutes are whole UTC minutes, the first and last possibly partial.
 * @throws RangeError when `sinceMs` is not before `nowMs` or the window is longer than a day; the
 *   postgres.js error.
 */
export async function callbackStats(
  sql: Sql,
  operatorId: string,
  sinceMs: number,
  nowMs: number,
): Promise<CallbackStats> {
  if (!(sinceMs < nowMs) || nowMs - sinceMs > 86_400_000)
    throw new RangeError(`callback stats window must be 1 ms..1 day, got ${sinceMs}..${nowMs}`);
  // Succeeded: an answer that completes the callback (see UNKNOWN_COMPLETES_KINDS).
  const succeededSql = sql`(class = any(${[...SUCCEEDED_CLASSES]}::text[])
    or (class = 'unknown_transaction' and exists (select 1 from wallet_callbacks w
        where w.tx_id = wallet_callback_attempts.tx_id and w.kind = any(${[...UNKNOWN_COMPLETES_KINDS]}::text[]))))`;
  // Left: answered, timed out, or a connection error (send.ts records each with its URL; one that
  // was never sent or could not be signed took no time on the wire).
  const sentSql = sql`(response_status is not null or code = 'TIMEOUT'
    or (request_url is not null and error like ${`${CONNECTION_ERROR_PREFIX}%`}))`;
  const [minutes, [totals], [counts]] = await Promise.all([
    sql<{ minute: string; total: number; succeeded: number }[]>`
      with m as (
        select generate_series(${Math.floor(sinceMs / 60_000)}::bigint, ${Math.floor((nowMs - 1) / 60_000)}::bigint) as minute
      ), a as (
        select at / 60000 as minute, count(*)::int as total,
               count(*) filter (where ${succeededSql})::int as succeeded
        from wallet_callback_attempts
        where operator_id = ${operatorId} and at >= ${sinceMs} and at < ${nowMs}
        group by 1
      )
      select (m.minute * 60000)::text as minute, coalesce(a.total, 0) as total, coalesce(a.succeeded, 0) as succeeded
      from m left join a on a.minute = m.minute order by m.minute`,
    sql<{ total: number; succeeded: number; p50: number | null; p99: number | null }[]>`
      select count(*)::int as total, count(*) filter (where ${succeededSql})::int as succeeded,
             percentile_cont(0.5) within group (order by latency_ms) filter (where ${sentSql}) as p50,
             percentile_cont(0.99) within group (order by latency_ms) filter (where ${sentSql}) as p99
      from wallet_callback_attempts
      where operator_id = ${operatorId} and at >= ${sinceMs} and at < ${nowMs}`,
    sql<{ retrying: number; parked: number }[]>`
      select count(*) filter (where status = 'due' and attempts > 0)::int as retrying,
             count(*) filter (where status = 'parked')::int as parked
      from wallet_callbacks where operator_id = ${operatorId} and status in ('due', 'parked')`,
  ]);
  const total = Number(totals?.total ?? 0);
  const succeeded = Number(totals?.succeeded ?? 0);
  const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    per_minute: minutes.map((m) => ({
      minute: iso(m.minute),
      total: Number(m.total),
      succeeded: Number(m.succeeded),
      failed: Number(m.total) - Number(m.succeeded),
    })),
    last_hour: {
      total,
      succeeded,
      failed: total - succeeded,
      success_rate: total === 0 ? null : succeeded / total,
      latency_ms: { p50: num(totals?.p50), p99: num(totals?.p99) },
    },
    retrying: Number(counts?.retrying ?? 0),
    parked: Number(counts?.parked ?? 0),
  };
}
