/**
 * Postgres side of the wallet saga (migration 008): the processes' states, the durable callbacks
 * and the outbox. Each function is one statement, so what it writes is all or nothing:
 * - writeProcesses: a batch of the processes' consumer (states, new callbacks, callbacks whose
 *   outcome the log already holds, events to append, the checkpoint);
 * - leaseCallbacks: due callbacks for one dispatcher, FOR UPDATE SKIP LOCKED, keeping a
 *   player's debits in order and a bet's other callbacks behind its debit;
 * - finishAttempts: a batch of attempts' results and their events, each fenced by its lease;
 * - extendLeases / releaseLease: a holder keeps or gives back its leases;
 * - pullForward: an operator's callbacks waiting for a later retry made due now (it is back).
 * A lease is fenced by its holder AND its attempt number (the fencing token): every lease adds one
 * to `attempts`, so when a lease ran out and the callback was leased again, even by the same
 * instance, the old holder's extend, finish and release change nothing.
 * Times are Unix ms from the caller's clock, so tests can move it.
 */
import type { CheckpointKey } from '../../lib/db/checkpoints.ts';
import { checkpointUpsert } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import type { CallbackJob } from '../../rules/wallet/bodies.ts';
import type { BetProcess } from '../../rules/wallet/process.ts';

/** Name of the saga's rows in projection_checkpoints. */
export const SAGA_PROJECTION = 'wallet-saga';

/** An encoded event to append after the commit. */
export interface OutboxEntry {
  readonly key: string;
  readonly value: Buffer;
}

/** A callback a process asked for, with the order of its player's debits. */
export interface NewCallback {
  readonly job: CallbackJob;
  readonly playerKey: string;
  /** Offset of the record that asked for it (a player's records share one partition). */
  readonly seq: bigint;
  /** `done` when the log already holds its outcome (a replay). */
  readonly status: 'due' | 'done';
}

const asState = (j: unknown): BetProcess => (typeof j === 'string' ? JSON.parse(j) : j) as BetProcess;

/** The stored states of the bets `txIds` that have one. */
export async function loadProcesses(sql: Sql, txIds: readonly number[]): Promise<Map<number, BetProcess>> {
  if (txIds.length === 0) return new Map();
  const rows = await sql<{ tx_id: string; state: unknown }[]>`
    select tx_id::text, state from wallet_bets where tx_id = any(${txIds.map(String)}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.tx_id), asState(r.state)]));
}

/** What one batch of the processes' consumer writes. */
export interface ProcessBatch {
  readonly states: ReadonlyMap<number, { state: BetProcess; playerKey: string; finished: boolean }>;
  readonly callbacks: readonly NewCallback[];
  /** Callbacks whose outcome event was read in this batch (tx ids): no longer due. */
  readonly outcomes: readonly number[];
  readonly outbox: readonly OutboxEntry[];
}

/**
 * Writes a batch and moves the checkpoint of `key` to `next`, as ONE statement.
 * @returns the ids of the outbox rows it added (to append and delete after the commit).
 * @throws the postgres.js error; nothing is then stored.
 */
export async function writeProcesses(
  sql: Sql,
  key: CheckpointKey,
  b: ProcessBatch,
  next: bigint,
  now: number,
): Promise<bigint[]> {
  const states = [...b.states.entries()];
  const cbs = b.callbacks;
  const rows = await sql<{ id: string | null }[]>`
    with states as (
      insert into wallet_bets (tx_id, player_key, state, finished, updated_at)
      select tx_id, player_key, state::jsonb, finished::boolean, now() from unnest(
        ${states.map(([id]) => String(id))}::bigint[],
        ${states.map(([, s]) => s.playerKey)}::text[],
        ${states.map(([, s]) => JSON.stringify(s.state))}::text[],
        ${states.map(([, s]) => (s.finished ? 'true' : 'false'))}::text[]
      ) as t(tx_id, player_key, state, finished)
      on conflict (tx_id) do update
        set state = excluded.state, finished = excluded.finished, updated_at = now()
      returning 1
    ), callbacks as (
      insert into wallet_callbacks (tx_id, kind, bet_tx_id, operator_id, user_id, player_key, seq, job,
                                    status, next_attempt_at, created_at, updated_at)
      select tx_id, kind, bet_tx_id, operator_id, user_id, player_key, seq, job::jsonb, status,
             ${now}, ${now}, ${now}
      from unnest(
        ${cbs.map((c) => String(c.job.txId))}::bigint[],
        ${cbs.map((c) => c.job.kind)}::text[],
        ${cbs.map((c) => String(c.job.betTxId))}::bigint[],
        ${cbs.map((c) => c.job.bet.operator_id)}::text[],
        ${cbs.map((c) => c.job.bet.user_id)}::text[],
        ${cbs.map((c) => c.playerKey)}::text[],
        ${cbs.map((c) => String(c.seq))}::bigint[],
        ${cbs.map((c) => JSON.stringify(c.job))}::text[],
        ${cbs.map((c) => c.status)}::text[]
      ) as t(tx_id, kind, bet_tx_id, operator_id, user_id, player_key, seq, job, status)
      on conflict (tx_id) do nothing
      returning 1
    ), outcomes as (
      update wallet_callbacks set status = 'done', updated_at = ${now}
      where tx_id = any(${b.outcomes.map(String)}::bigint[]) and status = 'due'
      returning 1
    ), outbox as (
      insert into wallet_outbox (key, value)
      select key, decode(value, 'hex') from unnest(
        ${b.outbox.map((o) => o.key)}::text[],
        ${b.outbox.map((o) => o.value.toString('hex'))}::text[]
      ) with ordinality as t(key, value, n)
      order by n
      returning id
    ), checkpoint as (
      ${checkpointUpsert(sql, key, next)}
    )
    select id::text from outbox
    union all select null from checkpoint`;
  return rows.flatMap((r) => (r.id === null ? [] : [BigInt(r.id)]));
}

/** A leased callback. */
export interface LeasedCallback {
  readonly txId: number;
  readonly job: CallbackJob;
  /** This attempt's number, 1-based. */
  readonly attempts: number;
  readonly playerKey: string;
  /** When this lease runs out, Unix ms (`extendLeases` moves it in the table, not here). */
  readonly leaseUntil: number;
  /**
   * Whether it was pulled forward once (`pullForward`): its retry schedule is then one step behind
   * its attempts (the pulled send was an extra attempt, not a step).
   */
  readonly pulledForward: boolean;
}

/**
 * Leases up to `limit` callbacks due at `now` (or whose lease ran out) for `owner` until
 * `now + leaseMs`, oldest due first. A debit is leased only when no earlier debit of the same
 * player is due or in flight; a win, rollback or close only when its bet's debit is neither.
 * @throws the postgres.js error.
 */
export async function leaseCallbacks(
  sql: Sql,
  owner: string,
  limit: number,
  now: number,
  leaseMs: number,
): Promise<LeasedCallback[]> {
  const rows = await sql<
    { tx_id: string; job: unknown; attempts: number; player_key: string; pulled: boolean }[]
  >`
    with c as (
      select c.tx_id from wallet_callbacks c
      where ((c.status = 'due' and c.next_attempt_at <= ${now})
             or (c.status = 'in_flight' and c.lease_until < ${now}))
        and (c.kind <> 'bet' or not exists (
              select 1 from wallet_callbacks e
              where e.kind = 'bet' and e.player_key = c.player_key and e.seq < c.seq
                and e.status in ('due', 'in_flight')))
        and (c.kind = 'bet' or not exists (
              select 1 from wallet_callbacks b
              where b.tx_id = c.bet_tx_id and b.status in ('due', 'in_flight')))
      order by c.next_attempt_at, c.tx_id
      limit ${limit}
      for update skip locked
    )
    update wallet_callbacks w
    set status = 'in_flight', lease_until = ${now + leaseMs}, leased_by = ${owner},
        attempts = w.attempts + 1, updated_at = ${now}
    from c where w.tx_id = c.tx_id
    returning w.tx_id::text, w.job, w.attempts, w.player_key, w.pulled_forward_at is not null as pulled`;
  return rows.map((r) => ({
    txId: Number(r.tx_id),
    job: (typeof r.job === 'string' ? JSON.parse(r.job) : r.job) as CallbackJob,
    attempts: Number(r.attempts),
    playerKey: r.player_key,
    leaseUntil: now + leaseMs,
    pulledForward: r.pulled === true,
  }));
}

/** An attempt's result as stored. */
export interface AttemptRecord {
  readonly status: 'done' | 'due' | 'parked' | 'skipped';
  readonly nextAttemptAt: number | null;
  readonly answer: string | null;
  readonly code: string | null;
  readonly error: string | null;
  /** The request body sent (JSON text) and the answer's body (an excerpt), for ops. */
  readonly request: string | null;
  readonly response: string | null;
  /** The fact to append, or null (a skipped round close). */
  readonly event: OutboxEntry | null;
  /**
   * This attempt as the operator portal shows it (table wallet_callback_attempts, migration 016),
   * stored with the result; null when there was no attempt to record (a skipped round close).
   */
  readonly sent: SentAttempt | null;
}

/**
 * One attempt as recorded in wallet_callback_attempts: what was sent and what came back. A callback
 * that could not be sent (unknown operator or session, a request that cannot be written) has no
 * request and no response, only its class, code and error.
 */
export interface SentAttempt {
  readonly operatorId: string;
  /** When it was sent (or its result made, when never sent), Unix ms. */
  readonly at: number;
  readonly method: 'GET' | 'POST' | null;
  readonly url: string | null;
  /** webhook-id, webhook-timestamp, webhook-signature (a MAC, never the secret) and content-type. */
  readonly headers: Readonly<Record<string, string>> | null;
  /** The JSON body sent, in full. */
  readonly body: string | null;
  /** The operator's HTTP status; null on a timeout or connection error, or when never sent. */
  readonly status: number | null;
  /** The operator's answer body, at most `RESPONSE_BODY_MAX` characters. */
  readonly responseBody: string | null;
  /** From send to answer (or timeout, or error), ms; 0 when never sent. */
  readonly latencyMs: number;
  /** The answer's class under the operator's answer table (rules/wallet/answers.ts). */
  readonly class: string;
  readonly code: string | null;
  readonly error: string | null;
}

/** Most characters of an answer body recorded per attempt (16 KiB of ASCII). */
export const RESPONSE_BODY_MAX = 16_384;

/**
 * `s` made storable as Postgres text (which refuses U+0000), at most `max` characters. Every text
 * value `finishAttempts` writes goes through it: an operator's answer reaches several columns (the
 * excerpt, the reason and code read from its body), and one unstorable value fails the whole batch.
 */
const storable = (s: string | null, max = Number.POSITIVE_INFINITY): string | null =>
  s === null ? null : s.slice(0, max).replaceAll('\u0000', '\uFFFD');

/** The result of a round close the operator asked not to get (round_close 'none'): nothing sent. */
export const SKIPPED: AttemptRecord = {
  status: 'skipped',
  nextAttemptAt: null,
  answer: null,
  code: null,
  error: null,
  request: null,
  response: null,
  event: null,
  sent: null,
};

/** A lease as its holder knows it: the callback and the attempt number it was leased with. */
export interface Lease {
  readonly txId: number;
  /** The fencing token: the row's `attempts` when this lease was taken. */
  readonly attempts: number;
}

/** An attempt's result for `finishAttempts`: the lease and what its attempt gave. */
export interface FinishedAttempt extends Lease {
  readonly record: AttemptRecord;
}

/** What `finishAttempts` stored. */
export interface FinishResult {
  /** The tx ids whose result was stored (their lease still held); the others' lease was lost. */
  readonly held: ReadonlySet<number>;
  /** The outbox rows added for the stored results' events, to append after the commit. */
  readonly outboxIds: readonly bigint[];
}

/**
 * Stores the results of `owner`'s attempts and adds their events to the outbox (in the order of
 * `attempts`), as ONE statement, each only while `owner` still holds its lease with the same
 * attempt number (a dispatcher whose lease ran out and was taken over, by another instance or by a
 * later lease of its own, stores nothing for that callback: the new holder's attempt, with the same
 * id, decides). Each stored result's attempt (`AttemptRecord.sent`) is recorded in
 * wallet_callback_attempts by the same statement, so an attempt is recorded exactly when its result
 * is. One statement for a batch of answers, so a burst of answers costs one round trip, not one each.
 * @throws the postgres.js error; nothing is then stored.
 */
export async function finishAttempts(
  sql: Sql,
  owner: string,
  attempts: readonly FinishedAttempt[],
  now: number,
): Promise<FinishResult> {
  if (attempts.length === 0) return { held: new Set(), outboxIds: [] };
  const rs = attempts.map((a) => a.record);
  const sent = attempts.flatMap((a) => (a.record.sent ? [{ a, s: a.record.sent }] : []));
  const rows = await sql<{ tx_id: string | null; id: string | null }[]>`
    with t as (
      select * from unnest(
        ${attempts.map((a) => String(a.txId))}::bigint[],
        ${attempts.map((a) => a.attempts)}::int[],
        ${rs.map((r) => r.status)}::text[],
        ${rs.map((r) => (r.nextAttemptAt === null ? null : String(r.nextAttemptAt)))}::bigint[],
        ${rs.map((r) => storable(r.answer))}::text[],
        ${rs.map((r) => storable(r.code))}::text[],
        ${rs.map((r) => storable(r.error))}::text[],
        ${rs.map((r) => storable(r.request))}::text[],
        ${rs.map((r) => storable(r.response))}::text[],
        ${rs.map((r) => storable(r.event?.key ?? null))}::text[],
        ${rs.map((r) => r.event?.value.toString('hex') ?? null)}::text[]
      ) with ordinality as t(tx_id, attempts, status, next_at, answer, code, error, request, response, key, value, n)
    ), u as (
      update wallet_callbacks w
      set status = t.status, next_attempt_at = coalesce(t.next_at, w.next_attempt_at),
          lease_until = null, leased_by = null, updated_at = ${now},
          last_answer = t.answer, last_code = t.code, last_error = t.error,
          last_request = t.request, last_response = t.response
      from t
      where w.tx_id = t.tx_id and w.status = 'in_flight' and w.leased_by = ${owner}
        and w.attempts = t.attempts
      returning w.tx_id, w.attempts
    ), o as (
      insert into wallet_outbox (key, value)
      select t.key, decode(t.value, 'hex') from t
      where t.key is not null and (t.tx_id, t.attempts) in (select tx_id, attempts from u)
      order by t.n
      returning id
    ), a as (
      -- Each attempt recorded with its result, fenced by the same lease (migration 016). The
      -- ordinal runs over the callback's whole life: a re-drive restarts w.attempts, not this.
      -- The lease makes a conflict impossible; were one to happen, the record is dropped rather
      -- than the result left unstorable.
      insert into wallet_callback_attempts (tx_id, attempt, operator_id, at, request_method, request_url, request_headers,
        request_body, response_status, response_body, latency_ms, class, code, error, next_attempt_at)
      select d.tx_id,
             coalesce((select max(x.attempt) from wallet_callback_attempts x where x.tx_id = d.tx_id), 0) + 1,
             d.operator_id, d.at, d.method, d.url, d.headers::jsonb, d.body, d.status, d.response, d.latency,
             d.class, d.code, d.error, d.next_at
      from unnest(
        ${sent.map(({ a }) => String(a.txId))}::bigint[],
        ${sent.map(({ a }) => a.attempts)}::int[],
        ${sent.map(({ s }) => storable(s.operatorId))}::text[],
        ${sent.map(({ s }) => String(s.at))}::bigint[],
        ${sent.map(({ s }) => s.method)}::text[],
        ${sent.map(({ s }) => storable(s.url))}::text[],
        ${sent.map(({ s }) => (s.headers === null ? null : JSON.stringify(s.headers)))}::text[],
        ${sent.map(({ s }) => storable(s.body))}::text[],
        ${sent.map(({ s }) => s.status)}::int[],
        ${sent.map(({ s }) => storable(s.responseBody, RESPONSE_BODY_MAX))}::text[],
        ${sent.map(({ s }) => Math.max(0, Math.round(s.latencyMs)))}::int[],
        ${sent.map(({ s }) => storable(s.class))}::text[],
        ${sent.map(({ s }) => storable(s.code))}::text[],
        ${sent.map(({ s }) => storable(s.error))}::text[],
        ${sent.map(({ a }) => (a.record.status === 'due' && a.record.nextAttemptAt !== null ? String(a.record.nextAttemptAt) : null))}::bigint[]
      ) as d(tx_id, lease_attempts, operator_id, at, method, url, headers, body, status, response, latency,
             class, code, error, next_at)
      where (d.tx_id, d.lease_attempts) in (select tx_id, attempts from u)
      on conflict (tx_id, attempt) do nothing
    )
    select tx_id::text, null::text as id from u
    union all select null, id::text from o`;
  const held = new Set<number>();
  const outboxIds: bigint[] = [];
  for (const r of rows) {
    if (r.tx_id !== null) held.add(Number(r.tx_id));
    else if (r.id !== null) outboxIds.push(BigInt(r.id));
  }
  outboxIds.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { held, outboxIds };
}

/**
 * Gives a lease back after an attempt that could not be finished (its result could not be built or
 * stored) or was never sent: due again at `retryAt` (Unix ms), the attempt not counted. Nothing
 * changes when the lease is no longer `owner`'s with that attempt number.
 */
export async function releaseLease(
  sql: Sql,
  owner: string,
  lease: Lease,
  now: number,
  retryAt: number,
): Promise<void> {
  await sql`
    update wallet_callbacks set status = 'due', lease_until = null, leased_by = null,
      attempts = greatest(attempts - 1, 0), next_attempt_at = ${retryAt}, updated_at = ${now}
    where tx_id = ${lease.txId} and status = 'in_flight' and leased_by = ${owner}
      and attempts = ${lease.attempts}`;
}

/**
 * Moves `owner`'s leases to at least `until` (Unix ms), in one statement: before an attempt that
 * would outlast its lease, and for the callbacks that wait for a send slot (the dispatcher's lease
 * keeper), so that a lease never runs out while its holder still means to send.
 * @returns the `leaseKey`s of the leases `owner` still held with that attempt number (the others
 *   ran out and were leased again, or are no longer in flight: nothing was changed for them).
 */
export async function extendLeases(
  sql: Sql,
  owner: string,
  leases: readonly Lease[],
  until: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const rows = await sql<{ tx_id: string; attempts: number }[]>`
    update wallet_callbacks w set lease_until = greatest(w.lease_until, ${until})
    from unnest(${leases.map((l) => String(l.txId))}::bigint[], ${leases.map((l) => l.attempts)}::int[])
      as t(tx_id, attempts)
    where w.tx_id = t.tx_id and w.attempts = t.attempts and w.status = 'in_flight'
      and w.leased_by = ${owner}
    returning w.tx_id::text, w.attempts`;
  return new Set(rows.map((r) => leaseKey({ txId: Number(r.tx_id), attempts: Number(r.attempts) })));
}

/** A lease's identity: its callback and its attempt number. */
export const leaseKey = (l: Lease): string => `${l.txId}:${l.attempts}`;

/**
 * Makes `operatorId`'s wins, rollbacks and round closes that wait for a later retry due at `now`
 * (Unix ms), in one statement: the operator was seen to answer again (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward). Only `due` rows with at least one attempt and a later
 * `next_attempt_at` that were never pulled forward are changed, and only their due time (and the
 * mark, `pulled_forward_at`): parked, leased, done and never-tried callbacks and bets are left as
 * they are, so leasing and its fencing decide who sends each, as for any due callback. Running it
 * twice, or from two instances at once, changes each row once.
 * @returns the tx ids made due.
 * @throws the postgres.js error; nothing is then changed.
 */
export async function pullForward(sql: Sql, operatorId: string, now: number): Promise<number[]> {
  const rows = await sql<{ tx_id: string }[]>`
    update wallet_callbacks set next_attempt_at = ${now}, pulled_forward_at = ${now}, updated_at = ${now}
    where operator_id = ${operatorId} and status = 'due' and kind <> 'bet' and attempts > 0
      and next_attempt_at > ${now} and pulled_forward_at is null
    returning tx_id::text`;
  return rows.map((r) => Number(r.tx_id));
}
