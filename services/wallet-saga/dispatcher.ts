/**
 * The callback dispatcher: leases due callbacks from wallet_callbacks
 * (store.ts; any number of saga instances share them through FOR UPDATE SKIP LOCKED), sends each
 * signed request, classifies the answer by the operator's answer table (rules/wallet/answers.ts),
 * and stores the result (done, due again at the next time of the retry schedule, or parked) with
 * the one fact to append (CallbackSucceeded or CallbackFailed; rules/wallet/attempt.ts) in one
 * statement fenced by the lease. The fact is appended after the commit (outbox.ts). What a fact
 * means for the bet is the process manager's to decide (processes.ts), so this loop never appends
 * BetRejected or RollbackRequested itself.
 *
 * No head-of-line blocking: a debit waits only for the same player's earlier debits; a player's
 * win or rollback in retry holds nothing back (it sits in the table until its time). A bet
 * callback's answer also moves the operator's circuit breaker (lib/db/operator-breakers.ts).
 *
 * Sending: a leased callback waits for one of its operator's send slots (send-queue.ts; round
 * closes after debits, wins and rollbacks); its timeout starts when it is sent. While it waits, the
 * lease keeper renews its lease every third of a lease, so it never runs out in the queue (and is
 * not leased again, even by this instance); just before sending, the lease is extended to cover
 * the attempt. Every lease is fenced by its attempt number (store.ts): a copy whose lease was taken
 * over sends nothing and stores nothing. At stop, callbacks still waiting give their leases back.
 *
 * Batching: the answers that come in while a batch of results is being stored are stored together
 * in one statement (store.ts finishAttempts), their facts appended together (outbox.ts).
 *
 * Waking: after each commit that added callbacks (`wake`), after each stored batch of results (it
 * may release a player's next debit or a bet's win), when room opens under `maxInFlight`, after
 * retries were pulled forward, and every `pollMs` (retries that came due, other instances'
 * callbacks, leases that ran out).
 *
 * Pulling forward (docs/decisions/retries/0002-retries-pulled-forward.md): when a path of an operator that was
 * failing answers again (recovery.ts), or its breaker closes (`pullForward`, called by the prober),
 * the operator's wins, rollbacks and round closes waiting for a later retry are made due now by one
 * statement (store.ts `pullForward`) and then leased and sent like any due callback: the send
 * queue paces them, and leases and fencing are the same.
 */

import { type ProbeTarget, updateBreaker } from '../../lib/db/operator-breakers.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { answerOf, type CallbackClient } from '../../lib/http/callback-client.ts';
import { encodeEvent, walletKey } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { Answer } from '../../rules/wallet/answers.ts';
import { afterAttempt, failedEvent } from '../../rules/wallet/attempt.ts';
import { buildRequest, type CallbackJob, type CallbackRequest } from '../../rules/wallet/bodies.ts';
import { afterBetAnswer, type BreakerConfig } from '../../rules/wallet/breaker.ts';
import type { Directory } from './directory.ts';
import type { SagaMetrics } from './metrics.ts';
import type { Outbox } from './outbox.ts';
import { pathOf, RecoveryWatch } from './recovery.ts';
import { SendOrder } from './send-order.ts';
import type { SendQueue } from './send-queue.ts';
import {
  type AttemptRecord,
  extendLeases,
  finishAttempts,
  type LeasedCallback,
  leaseCallbacks,
  leaseKey,
  pullForward as pullForwardRows,
  releaseLease,
  SKIPPED,
} from './store.ts';

export interface DispatcherDeps {
  readonly sql: Sql;
  readonly directory: Directory;
  readonly client: CallbackClient;
  readonly outbox: Outbox;
  readonly metrics: SagaMetrics;
  readonly logger: Logger;
  /** This instance's name in leases. */
  readonly owner: string;
  /** Unix ms. */
  readonly now: () => number;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  /** Callbacks leased at once by this instance (sent, or waiting in `sendQueue`). */
  readonly maxInFlight: number;
  /** Who is sent first, and how many at once, to each operator. */
  readonly sendQueue: SendQueue;
  /** Longest sleep between two looks at the table, ms. */
  readonly pollMs: number;
  /** How long a lease lasts, ms; an operator whose timeout is longer gets its lease extended first. */
  readonly leaseMs: number;
  /** A lease outlives the operator's timeout by at least this much, ms. */
  readonly leaseMarginMs: number;
  readonly breaker: BreakerConfig;
  /** ISO 4217 and the configured crypto precisions: each amount goes out in its currency's. */
  readonly currencies: Currencies;
  /** Pull an operator's waiting retries forward when it answers again (WALLET_SAGA_PULL_FORWARD). */
  readonly pullForward: boolean;
}

export interface Dispatcher {
  start(): void;
  /** Look at the table now (new callbacks were committed). */
  wake(): void;
  /** Stops leasing, waits for attempts in progress (at most `graceMs`). */
  stop(graceMs: number): Promise<void>;
  /** Callbacks leased and not finished. */
  readonly inFlight: number;
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
  /**
   * The operator is back (its breaker closed): its callbacks waiting for a later retry are made due
   * now, unless pulling forward is off. Not awaited by callers; failures are logged.
   */
  pullForward(operatorId: string): void;
}

/** Most attempts' results stored by one statement. */
const FINISH_BATCH = 256;

/** Largest body excerpt kept for ops, characters. */
const EXCERPT = 2000;

/**
 * The result of a callback that cannot be sent (operator unknown or disabled, session unknown, a
 * request that cannot be written): nothing was sent, so nothing moved — a refusal. A bet is then
 * rejected without a rollback; any other callback is parked for ops.
 */
function unsendable(job: CallbackJob, attempts: number, reason: string, at: number): AttemptRecord {
  const code = reason.split(':')[0] || 'UNSENDABLE';
  const answer = { class: 'refused', code: 'OPERATOR_REFUSED', reason } as const;
  const parked = job.kind !== 'bet';
  const event = failedEvent(job, answer, attempts, parked, null, at);
  return {
    status: parked ? 'parked' : 'done',
    nextAttemptAt: null,
    answer: 'refused',
    code,
    error: reason.slice(0, 500),
    request: null,
    response: null,
    event: { key: walletKey(job.bet), value: encodeEvent(event) },
  };
}

/** Builds the dispatcher; nothing runs before `start`. */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { sql, metrics, now, sendQueue } = deps;
  const log = deps.logger.child({ component: 'wallet-dispatcher' });
  const running = new Set<Promise<void>>();
  let stopped = false;
  let started = false;
  let timer: NodeJS.Timeout | null = null;
  let looking = false;
  let again = false;
  const idleWaiters: Array<() => void> = [];

  /**
   * Leased callbacks waiting for a send slot: until when each lease holds (Unix ms), and whether it
   * was found taken over (then it is not sent).
   */
  const waiting = new Map<LeasedCallback, { until: number; lost: boolean }>();
  let keeper: NodeJS.Timeout | null = null;
  /** Renews the leases of the callbacks waiting for a slot; marks those found taken over. */
  const keepLeases = async (): Promise<void> => {
    const entries = [...waiting];
    if (entries.length === 0) return;
    const until = now() + deps.leaseMs;
    const held = await extendLeases(
      sql,
      deps.owner,
      entries.map(([c]) => c),
      until,
    );
    for (const [c, w] of entries) {
      if (held.has(leaseKey(c))) w.until = Math.max(w.until, until);
      else w.lost = true;
    }
  };

  const settleIdle = () => {
    if (running.size === 0) for (const w of idleWaiters.splice(0)) w();
  };

  /**
   * Records a bet answer in the operator's breaker, in the order the bets were sent (breakerOrder
   * below; one chain of updates per operator), so "consecutive" means consecutive: a success is
   * written whenever a failure may be counted (this instance's view), a failure always. Not awaited
   * by the attempt.
   */
  const breakerChain = new Map<string, Promise<void>>();
  const mayCount = new Map<string, boolean>();
  const pending = new Map<string, number>();
  const recordBreaker = (job: CallbackJob, answer: Answer): void => {
    const op = job.bet.operator_id;
    const failed = answer.class === 'failed';
    if (!failed && !mayCount.get(op)) return;
    mayCount.set(op, failed);
    pending.set(op, (pending.get(op) ?? 0) + 1);
    const probe: ProbeTarget = {
      user_id: job.bet.user_id,
      currency: job.bet.currency,
      session_id: job.bet.session_id,
    };
    const reason = failed ? answer.reason : null;
    const next = (breakerChain.get(op) ?? Promise.resolve())
      .then(async () => {
        const { before, after } = await updateBreaker(
          sql,
          op,
          (s) => afterBetAnswer(s, failed ? 'failed' : 'ok', reason, now(), deps.breaker),
          now(),
          failed ? probe : undefined,
        );
        // Other instances count too: the stored state decides, unless a later answer is queued.
        if (pending.get(op) === 1) mayCount.set(op, after.state === 'open' || after.failures > 0);
        if (before.state !== after.state) {
          metrics.breakerOpen.set({ operator: op }, after.state === 'open' ? 1 : 0);
          log.warn(
            { operator: op, state: after.state, error: after.lastError },
            'operator circuit breaker changed',
          );
        }
      })
      .catch((err) => log.warn({ err: (err as Error).message, operator: op }, 'breaker update failed'))
      .finally(() => pending.set(op, (pending.get(op) ?? 1) - 1));
    breakerChain.set(op, next);
  };
  const breakerOrder = new SendOrder<{ job: CallbackJob; answer: Answer }>((_op, a) =>
    recordBreaker(a.job, a.answer),
  );

  /**
   * One pull per recovery and operator: a recovery seen while a pull runs makes one more pass
   * after it (rows it already moved are not moved again), never a second statement at once.
   */
  const recovery = new RecoveryWatch();
  const pulling = new Map<string, Promise<void>>();
  const pullAgain = new Set<string>();
  const pullForward = (operatorId: string): void => {
    if (!deps.pullForward || stopped) return;
    if (pulling.has(operatorId)) {
      pullAgain.add(operatorId);
      return;
    }
    const run = async () => {
      do {
        pullAgain.delete(operatorId);
        const txIds = await pullForwardRows(sql, operatorId, now());
        if (txIds.length > 0) {
          metrics.pulledForward.inc({ operator: operatorId }, txIds.length);
          log.info(
            { operator: operatorId, callbacks: txIds.length },
            'operator answers again; its waiting retries are due now',
          );
          wake();
        }
      } while (pullAgain.has(operatorId) && !stopped);
    };
    const p = run()
      .catch((err) =>
        log.warn({ err: (err as Error).message, operator: operatorId }, 'pulling retries forward failed'),
      )
      .finally(() => pulling.delete(operatorId));
    pulling.set(operatorId, p);
  };

  /** One attempt of a leased callback, to its stored result. */
  const attempt = async (c: LeasedCallback): Promise<void> => {
    const { job } = c;
    const at0 = now();
    const op = await deps.directory.operator(job.bet.operator_id, at0);
    const session = op ? await deps.directory.session(job.bet.session_id) : null;
    let record: AttemptRecord;
    if (!op || !session) {
      const code = op ? 'SESSION_UNKNOWN' : 'OPERATOR_UNKNOWN';
      const reason = op
        ? `unknown session ${job.bet.session_id}`
        : `unknown or disabled operator ${job.bet.operator_id}`;
      // Nothing was sent, so nothing moved: a refusal (a bet is rejected without a rollback; any
      // other callback is parked for ops).
      const answer = { class: 'refused', code: 'OPERATOR_REFUSED', reason: `${code}: ${reason}` } as const;
      const parked = job.kind !== 'bet';
      const event = failedEvent(job, answer, c.attempts, parked, null, at0);
      record = {
        status: parked ? 'parked' : 'done',
        nextAttemptAt: null,
        answer: 'refused',
        code,
        error: reason,
        request: null,
        response: null,
        event: { key: walletKey(job.bet), value: encodeEvent(event) },
      };
    } else if (job.kind === 'close' && op.roundClose === 'none') {
      record = SKIPPED;
    } else {
      let req: CallbackRequest;
      try {
        req = buildRequest(job, op, session, deps.currencies);
      } catch (err) {
        // A request that cannot be written (unknown currency, an amount the operator's format
        // cannot carry, a round-end path missing): permanent, nothing was sent.
        record = unsendable(job, c.attempts, (err as Error).message, at0);
        await finish(c, record);
        return;
      }
      // Waits for one of the operator's slots, behind callbacks a player waits on more (send-queue.ts).
      const operatorId = job.bet.operator_id;
      const lease = { until: c.leaseUntil, lost: false };
      waiting.set(c, lease);
      metrics.sendWaiting.set(waiting.size);
      const sent = await sendQueue.run(operatorId, job.kind, async () => {
        waiting.delete(c);
        metrics.sendWaiting.set(waiting.size);
        if (lease.lost || stopped) return 'lost' as const;
        // The lease must outlast this attempt from now on.
        const needed = now() + op.timeoutMs + deps.leaseMarginMs;
        if (needed > lease.until) {
          if (!(await extendLeases(sql, deps.owner, [c], needed)).has(leaseKey(c))) return 'lost' as const;
          // A statement slower than the margin: the send could outlive the lease. Not sent; given back.
          if (now() + op.timeoutMs > needed) return 'give-back' as const;
        }
        const end = metrics.attemptSeconds.startTimer({ kind: job.kind });
        const sentAt = now();
        // A bet's answer reaches the breaker in the order the bets were sent (send-order.ts).
        const seq = job.kind === 'bet' ? breakerOrder.sent(operatorId) : undefined;
        let answer: Answer | null = null;
        try {
          // Signed at the wall-clock time: operators check webhook-timestamp against theirs, whatever
          // clock schedules the retries.
          const ex = await deps.client.send(req, op.signingSecret, op.timeoutMs, Date.now());
          end();
          answer = answerOf(ex, op.answers, { ...req, kind: job.kind });
          // A path that was failing and answers again: the operator is back (recovery.ts).
          if (recovery.answered(operatorId, pathOf(req.url), sentAt, answer.class === 'failed'))
            pullForward(operatorId);
          return { ex, answer };
        } finally {
          if (seq !== undefined) breakerOrder.answered(operatorId, seq, answer && { job, answer });
        }
      });
      if (typeof sent === 'string') {
        // Not sent, nothing stored. Taken over while it waited: the holder sends it (same id).
        // Stopping, or a lease that could not be made long enough: given back, due at once
        // (fenced, so a lease stop() already gave back or another instance holds is left alone).
        if (sent === 'give-back' || stopped)
          await releaseLease(sql, deps.owner, c, now(), now()).catch(() => {});
        if (!stopped)
          log.warn({ txId: job.txId, kind: job.kind, why: sent }, 'callback not sent; its lease is not held');
        return;
      }
      const { ex, answer } = sent;
      metrics.attempts.inc({ kind: job.kind, answer: answer.class });
      const at = now();
      // A pulled-forward send was an extra attempt, not a step of the schedule (attempt.ts).
      const step = c.pulledForward ? Math.max(1, c.attempts - 1) : c.attempts;
      const r = afterAttempt(job, answer, c.attempts, op.retrySchedule, at, deps.random(), step);
      if (r.status === 'due') metrics.retries.inc({ kind: job.kind });
      if (r.status === 'parked') {
        metrics.parked.inc({ kind: job.kind });
        log.warn({ txId: job.txId, kind: job.kind, attempts: c.attempts, answer }, 'callback parked for ops');
      } else if (answer.class !== 'ok' && answer.class !== 'duplicate')
        log.info(
          { txId: job.txId, kind: job.kind, attempts: c.attempts, answer, next: r.nextAttemptAt },
          'callback not acknowledged',
        );
      record = {
        status: r.status,
        nextAttemptAt: r.nextAttemptAt,
        answer: answer.class,
        code: 'code' in answer ? answer.code : null,
        error: 'reason' in answer ? answer.reason.slice(0, 500) : null,
        request: JSON.stringify(req.body).slice(0, EXCERPT),
        response:
          ex.type === 'answer'
            ? `HTTP ${ex.status} ${ex.text.slice(0, EXCERPT)}`
            : ex.type === 'timeout'
              ? `no answer within ${ex.timeoutMs} ms`
              : ex.reason,
        event: { key: walletKey(job.bet), value: encodeEvent(r.event) },
      };
    }
    await finish(c, record);
  };

  /**
   * Results waiting to be stored: every result that comes in while a batch is being stored goes in
   * the next batch (one statement per batch, store.ts finishAttempts), and the table is looked at
   * again once per stored batch (a stored debit may release its player's next debit and its bet's
   * win), not once per answer.
   */
  interface Finishing {
    readonly c: LeasedCallback;
    readonly record: AttemptRecord;
    readonly stored: () => void;
    readonly failed: (err: unknown) => void;
  }
  const finishQueue: Finishing[] = [];
  let finishing = false;
  const drainFinishes = async (): Promise<void> => {
    finishing = true;
    try {
      while (finishQueue.length > 0) {
        const batch = finishQueue.splice(0, FINISH_BATCH);
        try {
          const r = await finishAttempts(
            sql,
            deps.owner,
            batch.map((f) => ({ txId: f.c.txId, attempts: f.c.attempts, record: f.record })),
            now(),
          );
          metrics.finishBatch.observe(batch.length);
          for (const f of batch) {
            if (r.held.has(f.c.txId)) continue;
            log.warn({ txId: f.c.txId }, 'lease lost before the result was stored; the new holder decides');
          }
          // The batch's events go to the log together; each attempt ends when they are appended.
          const appended = deps.outbox.flush(r.outboxIds);
          appended.catch(() => {});
          for (const f of batch) appended.then(f.stored, f.failed);
          wake();
        } catch (err) {
          for (const f of batch) f.failed(err);
        }
      }
    } finally {
      finishing = false;
    }
  };

  /** Stores an attempt's result (fenced by the lease) and appends its fact, batched with others. */
  const finish = (c: LeasedCallback, record: AttemptRecord): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      finishQueue.push({ c, record, stored: resolve, failed: reject });
      if (!finishing) void drainFinishes();
    });

  const track = (c: LeasedCallback) => {
    const p = attempt(c)
      .catch(async (err) => {
        // The result could not be stored or appended: give the lease back when we can (the
        // outbox relay appends a stored result; an unstored one is sent again, same id).
        log.error({ err, txId: c.txId }, 'callback attempt could not be finished; tried again in 5 s');
        await releaseLease(sql, deps.owner, c, now(), now() + 5_000).catch(() => {});
      })
      .finally(() => {
        const wasFull = running.size >= deps.maxInFlight;
        running.delete(p);
        metrics.inFlight.set(running.size);
        settleIdle();
        // Stored results wake the table themselves; here only room that opened up does.
        if (wasFull) wake();
      });
    running.add(p);
    metrics.inFlight.set(running.size);
  };

  let lookDone: Promise<void> = Promise.resolve();
  const look = async (): Promise<void> => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    let finished!: () => void;
    lookDone = new Promise((r) => {
      finished = r;
    });
    try {
      do {
        again = false;
        const room = deps.maxInFlight - running.size;
        if (stopped || room <= 0) break;
        const leased = await leaseCallbacks(sql, deps.owner, Math.min(room, 64), now(), deps.leaseMs);
        if (stopped) {
          // Stopped while leasing: give these back untouched, due at once for whoever runs next.
          for (const c of leased) await releaseLease(sql, deps.owner, c, now(), now()).catch(() => {});
          break;
        }
        for (const c of leased) track(c);
        if (leased.length === Math.min(room, 64)) again = true;
      } while (again && !stopped);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'leasing callbacks failed; retried');
    } finally {
      looking = false;
      finished();
    }
  };

  const schedule = () => {
    if (timer) clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      void look().finally(schedule);
    }, deps.pollMs);
  };

  function wake(): void {
    if (!started || stopped) return;
    void look();
  }

  return {
    start() {
      if (started) return;
      started = true;
      void look().finally(schedule);
      keeper = setInterval(
        () =>
          void keepLeases().catch((err) =>
            log.warn({ err: (err as Error).message }, 'renewing the leases of waiting callbacks failed'),
          ),
        Math.max(100, Math.floor(deps.leaseMs / 3)),
      );
    },
    wake,
    async stop(graceMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      if (keeper) clearInterval(keeper);
      keeper = null;
      // A lease in progress ends first (what it leased is then given back), so nothing is in
      // flight that the wait below does not see.
      await lookDone;
      // Callbacks still waiting for a send slot are not sent: their leases go back, due at once for
      // whoever runs next (this instance after a restart, or another).
      const unsent = [...waiting.keys()];
      for (const w of waiting.values()) w.lost = true;
      waiting.clear();
      metrics.sendWaiting.set(0);
      await Promise.all(unsent.map((c) => releaseLease(sql, deps.owner, c, now(), now()).catch(() => {})));
      await Promise.allSettled([...pulling.values()]);
      if (running.size > 0)
        await Promise.race([
          Promise.allSettled([...running]),
          new Promise((r) => setTimeout(r, graceMs).unref()),
        ]);
    },
    get inFlight() {
      return running.size;
    },
    idle() {
      if (running.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    pullForward,
  };
}
