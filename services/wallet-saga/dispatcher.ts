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
 * This file is the loop alone: lease what there is room for, track each attempt to its end, stop.
 * Its parts are modules of their own: waking the loop (wake.ts), the lease keeper
 * (lease-keeper.ts), one attempt up to its result (send.ts), the breaker's send order
 * (breaker-answers.ts), the batched finish (finish.ts) and pulling retries forward
 * (pull-forward.ts, on recovery.ts's signal).
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
 * over sends nothing and stores nothing. At stop, callbacks still waiting give their leases back
 * (send.ts, lease-keeper.ts).
 *
 * Batching: the answers that come in while a batch of results is being stored are stored together
 * in one statement (store.ts finishAttempts), their facts appended together (outbox.ts; finish.ts).
 *
 * Waking: after each commit that added callbacks (`wake`), after each stored batch of results (it
 * may release a player's next debit or a bet's win), when room opens under `maxInFlight`, after
 * retries were pulled forward, and every `pollMs` (retries that came due, other instances'
 * callbacks, leases that ran out) (wake.ts).
 *
 * Pulling forward (docs/decisions/retries/0002-retries-pulled-forward.md): when a path of an operator that was
 * failing answers again (recovery.ts), or its breaker closes (`pullForward`, called by the prober),
 * the operator's wins, rollbacks and round closes waiting for a later retry are made due now by one
 * statement (store.ts `pullForward`) and then leased and sent like any due callback: the send
 * queue paces them, and leases and fencing are the same.
 */

import type { Sql } from '../../lib/db/pool.ts';
import type { CallbackClient } from '../../lib/http/callback-client.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Currencies } from '../../rules/money/currencies.ts';
import type { BreakerConfig } from '../../rules/wallet/breaker.ts';
import { BreakerAnswers } from './breaker-answers.ts';
import type { Directory } from './directory.ts';
import { Finisher } from './finish.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import type { SagaMetrics } from './metrics.ts';
import type { Outbox } from './outbox.ts';
import { PullForward } from './pull-forward.ts';
import { RecoveryWatch } from './recovery.ts';
import { Sender } from './send.ts';
import type { SendQueue } from './send-queue.ts';
import { type LeasedCallback, leaseCallbacks, releaseLease } from './store.ts';
import { Waker } from './wake.ts';

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

/** Most callbacks leased by one statement. */
const LEASE_PAGE = 64;

/** Builds the dispatcher and its parts; nothing runs before `start`. */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { sql, metrics, now } = deps;
  const log = deps.logger.child({ component: 'wallet-dispatcher' });
  const running = new Set<Promise<void>>();
  const idleWaiters: Array<() => void> = [];
  let stopped = false;
  const isStopped = () => stopped;
  const parts = { sql, owner: deps.owner, now, metrics, log };

  const keeper = new LeaseKeeper({ ...parts, leaseMs: deps.leaseMs });
  const pulls = new PullForward({
    ...parts,
    enabled: deps.pullForward,
    stopped: isStopped,
    pulled: () => waker.wake(),
  });
  const sender = new Sender({
    ...parts,
    directory: deps.directory,
    client: deps.client,
    sendQueue: deps.sendQueue,
    keeper,
    breaker: new BreakerAnswers({ ...parts, breaker: deps.breaker }),
    recovery: new RecoveryWatch(),
    recovered: (operatorId) => pulls.pull(operatorId),
    stopped: isStopped,
    random: deps.random,
    leaseMarginMs: deps.leaseMarginMs,
    currencies: deps.currencies,
  });
  const finisher = new Finisher({ ...parts, outbox: deps.outbox, stored: () => waker.wake() });

  /** One attempt, its result stored (a callback not sent has none). */
  const attempt = async (c: LeasedCallback): Promise<void> => {
    const record = await sender.attempt(c);
    if (record) await finisher.finish(c, record);
  };

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
        if (running.size === 0) for (const w of idleWaiters.splice(0)) w();
        // Stored results wake the table themselves; here only room that opened up does.
        if (wasFull) waker.wake();
      });
    running.add(p);
    metrics.inFlight.set(running.size);
  };

  /** One pass of the loop: leases what there is room for. @returns true when a full page came. */
  const pass = async (): Promise<boolean> => {
    const room = deps.maxInFlight - running.size;
    if (stopped || room <= 0) return false;
    const page = Math.min(room, LEASE_PAGE);
    const leased = await leaseCallbacks(sql, deps.owner, page, now(), deps.leaseMs);
    if (stopped) {
      // Stopped while leasing: give these back untouched, due at once for whoever runs next.
      for (const c of leased) await releaseLease(sql, deps.owner, c, now(), now()).catch(() => {});
      return false;
    }
    for (const c of leased) track(c);
    return leased.length === page;
  };

  const waker = new Waker({
    pass,
    pollMs: deps.pollMs,
    stopped: isStopped,
    failed: (err) => log.warn({ err: (err as Error).message }, 'leasing callbacks failed; retried'),
  });

  return {
    start() {
      if (waker.start()) keeper.start();
    },
    wake: () => waker.wake(),
    async stop(graceMs) {
      stopped = true;
      const passDone = waker.stop();
      keeper.stop();
      // A lease in progress ends first (what it leased is then given back), so nothing is in
      // flight that the wait below does not see.
      await passDone;
      // Callbacks still waiting for a send slot are not sent: their leases go back, due at once for
      // whoever runs next (this instance after a restart, or another).
      await keeper.giveBack();
      await pulls.settled();
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
    pullForward: (operatorId) => pulls.pull(operatorId),
  };
}
