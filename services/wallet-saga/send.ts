/**
 * One attempt of one leased callback, up to its result (store.ts `AttemptRecord`), which the
 * dispatcher then stores (finish.ts). In order: find the operator and the session (directory.ts);
 * build the request (rules/wallet/bodies.ts); wait for one of the operator's send slots
 * (send-queue.ts) while the lease keeper renews the lease (lease-keeper.ts); just before sending,
 * re-check the lease and extend it to cover the attempt (fenced by holder and attempt number,
 * store.ts `extendLeases`), so a send never outlives its lease; sign and send it, its timeout
 * starting at send (lib/http/callback-client.ts); classify the answer by the operator's answer
 * table (rules/wallet/answers.ts); and decide the result and its one fact (rules/wallet/attempt.ts).
 * A bet's answer goes to the breaker in send order (breaker-answers.ts); a path that was failing
 * and answers again is a recovery (recovery.ts), and the operator's waiting retries are pulled
 * forward (pull-forward.ts).
 *
 * A callback that cannot be sent (operator unknown or disabled, session unknown, a request that
 * cannot be written) gets a refusal: nothing was sent, so nothing moved. A bet is then rejected
 * without a rollback; any other callback is parked for ops. A callback whose lease was taken over
 * while it waited, or that cannot be sent with a lease long enough, or that waited when the
 * dispatcher stopped, is not sent and has no result.
 */
import type { Sql } from '../../lib/db/pool.ts';
import {
  answerOf,
  type CallbackClient,
  type Exchange,
  type SentExchange,
} from '../../lib/http/callback-client.ts';
import { encodeEvent, walletKey } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { Answer } from '../../rules/wallet/answers.ts';
import { afterAttempt, failedEvent } from '../../rules/wallet/attempt.ts';
import { buildRequest, type CallbackJob, type CallbackRequest } from '../../rules/wallet/bodies.ts';
import { signingSecretsAt } from '../../rules/wallet/signing.ts';
import type { BreakerAnswers } from './breaker-answers.ts';
import type { Directory, SagaOperator } from './directory.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { SagaMetrics } from './metrics.ts';
import { pathOf, type RecoveryWatch } from './recovery.ts';
import type { SendQueue } from './send-queue.ts';
import {
  type AttemptRecord,
  extendLeases,
  type LeasedCallback,
  leaseKey,
  RESPONSE_BODY_MAX,
  releaseLease,
  type SentAttempt,
  SKIPPED,
} from './store.ts';

/** Largest body excerpt kept for ops, characters. */
const EXCERPT = 2000;

export interface SenderDeps {
  readonly sql: Sql;
  /** This instance's name in leases. */
  readonly owner: string;
  readonly directory: Directory;
  readonly client: CallbackClient;
  /** Who is sent first, and how many at once, to each operator. */
  readonly sendQueue: SendQueue;
  readonly keeper: LeaseKeeper;
  readonly breaker: BreakerAnswers;
  readonly recovery: RecoveryWatch;
  /** The operator is back: pull its waiting retries forward (not awaited). */
  readonly recovered: (operatorId: string) => void;
  /** Whether the dispatcher is stopping: a callback still waiting for its slot is not sent. */
  readonly stopped: () => boolean;
  /** Unix ms. */
  readonly now: () => number;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  /** A lease outlives the operator's timeout by at least this much, ms. */
  readonly leaseMarginMs: number;
  /** ISO 4217 and the configured crypto precisions: each amount goes out in its currency's. */
  readonly currencies: Currencies;
  readonly metrics: SagaMetrics;
  readonly log: Logger;
}

/** Why a callback was not sent: its lease was taken over, or could not be made long enough. */
type NotSent = 'lost' | 'give-back';

/** A sent callback's exchange (with the headers sent), its classified answer, when and how long. */
interface Sent {
  readonly ex: SentExchange;
  readonly answer: Answer;
  /** When it was sent, Unix ms (the saga's clock). */
  readonly at: number;
  /** From send to answer, timeout or error, ms. */
  readonly latencyMs: number;
}

/** The attempt record of a callback that was not sent (nothing went out): its refusal alone. */
function notSentAttempt(job: CallbackJob, at: number, code: string, reason: string): SentAttempt {
  return {
    operatorId: job.bet.operator_id,
    at,
    method: null,
    url: null,
    headers: null,
    body: null,
    status: null,
    responseBody: null,
    latencyMs: 0,
    class: 'refused',
    code,
    error: reason.slice(0, 500),
  };
}

/**
 * The result of a callback that cannot be sent (a request that cannot be written): nothing was
 * sent, so nothing moved — a refusal. A bet is then rejected without a rollback; any other
 * callback is parked for ops. `reason` starts with its code (`CODE: …`).
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
    sent: notSentAttempt(job, at, code, reason),
  };
}

/** The result of a callback whose operator (unknown or disabled) or session is unknown: a refusal. */
function notFound(job: CallbackJob, operatorFound: boolean, attempts: number, at: number): AttemptRecord {
  const code = operatorFound ? 'SESSION_UNKNOWN' : 'OPERATOR_UNKNOWN';
  const reason = operatorFound
    ? `unknown session ${job.bet.session_id}`
    : `unknown or disabled operator ${job.bet.operator_id}`;
  const answer = { class: 'refused', code: 'OPERATOR_REFUSED', reason: `${code}: ${reason}` } as const;
  const parked = job.kind !== 'bet';
  const event = failedEvent(job, answer, attempts, parked, null, at);
  return {
    status: parked ? 'parked' : 'done',
    nextAttemptAt: null,
    answer: 'refused',
    code,
    error: reason,
    request: null,
    response: null,
    event: { key: walletKey(job.bet), value: encodeEvent(event) },
    sent: notSentAttempt(job, at, code, reason),
  };
}

/** What ops read of an exchange: the status and body excerpt, the timeout, or the reason. */
function responseOf(ex: Exchange): string {
  if (ex.type === 'answer') return `HTTP ${ex.status} ${ex.text.slice(0, EXCERPT)}`;
  if (ex.type === 'timeout') return `no answer within ${ex.timeoutMs} ms`;
  return ex.reason;
}

export class Sender {
  constructor(private readonly deps: SenderDeps) {}

  /**
   * One attempt of `c`.
   * @returns its result to store, or null when it was not sent and nothing is to be stored (its
   *   lease was taken over, could not be made long enough, or the dispatcher stopped; the lease is
   *   given back where it is still this attempt's).
   * @throws the directory's, the database's or the client's error (the caller gives the lease back).
   */
  async attempt(c: LeasedCallback): Promise<AttemptRecord | null> {
    const { job } = c;
    const at0 = this.deps.now();
    const op = await this.deps.directory.operator(job.bet.operator_id, at0);
    const session = op ? await this.deps.directory.session(job.bet.session_id) : null;
    // Nothing was sent, so nothing moved: a refusal (a bet is rejected without a rollback; any
    // other callback is parked for ops).
    if (!op || !session) return notFound(job, Boolean(op), c.attempts, at0);
    if (job.kind === 'close' && op.roundClose === 'none') return SKIPPED;
    let req: CallbackRequest;
    try {
      req = buildRequest(job, op, session, this.deps.currencies);
    } catch (err) {
      // A request that cannot be written (unknown currency, an amount the operator's format
      // cannot carry, a round-end path missing): permanent, nothing was sent.
      return unsendable(job, c.attempts, (err as Error).message, at0);
    }
    const sent = await this.whenSlotFree(c, op, req);
    if (typeof sent === 'string') {
      await this.notSent(c, sent);
      return null;
    }
    return this.resultOf(c, op, req, sent);
  }

  /**
   * Waits for one of the operator's slots, behind callbacks a player waits on more
   * (send-queue.ts), then sends `req` if the lease is still held and long enough.
   */
  private whenSlotFree(c: LeasedCallback, op: SagaOperator, req: CallbackRequest): Promise<Sent | NotSent> {
    const { sql, owner, now, keeper, leaseMarginMs } = this.deps;
    const lease = keeper.hold(c);
    return this.deps.sendQueue.run(c.job.bet.operator_id, c.job.kind, async () => {
      keeper.release(c);
      if (lease.lost || this.deps.stopped()) return 'lost' as const;
      // The lease must outlast this attempt from now on.
      const needed = now() + op.timeoutMs + leaseMarginMs;
      if (needed > lease.until) {
        if (!(await extendLeases(sql, owner, [c], needed)).has(leaseKey(c))) return 'lost' as const;
        // A statement slower than the margin: the send could outlive the lease. Not sent; given back.
        if (now() + op.timeoutMs > needed) return 'give-back' as const;
      }
      return this.send(c.job, op, req);
    });
  }

  /** Signs and sends `req` (its timeout starts now) and classifies the answer. */
  private async send(job: CallbackJob, op: SagaOperator, req: CallbackRequest): Promise<Sent> {
    const { now, metrics, breaker, recovery } = this.deps;
    const operatorId = job.bet.operator_id;
    const end = metrics.attemptSeconds.startTimer({ kind: job.kind });
    const sentAt = now();
    // A bet's answer reaches the breaker in the order the bets were sent (send-order.ts).
    const seq = job.kind === 'bet' ? breaker.sent(operatorId) : undefined;
    let answer: Answer | null = null;
    try {
      // Signed at the wall-clock time: operators check webhook-timestamp against theirs, whatever
      // clock schedules the retries; and with every secret valid then (a rotation's overlap signs
      // with the new and the old one, rules/wallet/signing.ts).
      const wall = Date.now();
      const t0 = performance.now();
      const ex = await this.deps.client.send(req, signingSecretsAt(op, wall), op.timeoutMs, wall);
      const latencyMs = performance.now() - t0;
      end();
      answer = answerOf(ex, op.answers, { ...req, kind: job.kind });
      // A path that was failing and answers again: the operator is back (recovery.ts).
      if (recovery.answered(operatorId, pathOf(req.url), sentAt, answer.class === 'failed'))
        this.deps.recovered(operatorId);
      return { ex, answer, at: sentAt, latencyMs };
    } finally {
      if (seq !== undefined) breaker.answered(operatorId, seq, answer && { job, answer });
    }
  }

  /**
   * Not sent, nothing stored. Taken over while it waited: the holder sends it (same id). Stopping,
   * or a lease that could not be made long enough: given back, due at once (fenced, so a lease the
   * lease keeper already gave back or another instance holds is left alone).
   */
  private async notSent(c: LeasedCallback, why: NotSent): Promise<void> {
    const { sql, owner, now, stopped } = this.deps;
    if (why === 'give-back' || stopped()) await releaseLease(sql, owner, c, now(), now()).catch(() => {});
    if (!stopped())
      this.deps.log.warn(
        { txId: c.job.txId, kind: c.job.kind, why },
        'callback not sent; its lease is not held',
      );
  }

  /** The result of a sent attempt: done, due again at the schedule's next time, or parked. */
  private resultOf(c: LeasedCallback, op: SagaOperator, req: CallbackRequest, sent: Sent): AttemptRecord {
    const { metrics, log } = this.deps;
    const { job } = c;
    const { ex, answer } = sent;
    const code = 'code' in answer ? answer.code : null;
    const error = 'reason' in answer ? answer.reason.slice(0, 500) : null;
    metrics.attempts.inc({ kind: job.kind, answer: answer.class });
    const at = this.deps.now();
    // A pulled-forward send was an extra attempt, not a step of the schedule (attempt.ts).
    const step = c.pulledForward ? Math.max(1, c.attempts - 1) : c.attempts;
    const r = afterAttempt(job, answer, c.attempts, op.retrySchedule, at, this.deps.random(), step);
    if (r.status === 'due') metrics.retries.inc({ kind: job.kind });
    if (r.status === 'parked') {
      metrics.parked.inc({ kind: job.kind });
      log.warn({ txId: job.txId, kind: job.kind, attempts: c.attempts, answer }, 'callback parked for ops');
    } else if (answer.class !== 'ok' && answer.class !== 'duplicate')
      log.info(
        { txId: job.txId, kind: job.kind, attempts: c.attempts, answer, next: r.nextAttemptAt },
        'callback not acknowledged',
      );
    return {
      status: r.status,
      nextAttemptAt: r.nextAttemptAt,
      answer: answer.class,
      code,
      error,
      request: JSON.stringify(req.body).slice(0, EXCERPT),
      response: responseOf(ex),
      event: { key: walletKey(job.bet), value: encodeEvent(r.event) },
      sent: {
        operatorId: job.bet.operator_id,
        at: sent.at,
        method: req.method,
        url: req.url,
        headers: ex.headers,
        body: JSON.stringify(req.body),
        status: ex.type === 'answer' ? ex.status : null,
        responseBody: ex.type === 'answer' ? ex.text.slice(0, RESPONSE_BODY_MAX) : null,
        latencyMs: sent.latencyMs,
        class: answer.class,
        code,
        error: ex.type === 'answer' ? error : (error ?? responseOf(ex)),
      },
    };
  }
}
