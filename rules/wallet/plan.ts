/**
 * The saga's decisions, pure (STYLE.md §3): which callback an event asks for, and which events
 * record a callback's outcome (notes/issue5-contract.md "Bet lifecycle"). Time comes in as `at`.
 *
 * - BetPlaced, mode default, not demo → Register Bet. Free and demo bets move no money.
 * - BetSettled won, not demo, payout > 0 → Register Win / Register Earnings (free-bet wins too).
 * - RollbackRequested, not demo, not free → Rollback.
 * Every other event (the saga's own outcomes among them) asks for nothing.
 */

import { rollbackTxId, winTxId } from '../money/money.ts';
import type { Ack, CallbackJob, Verdict } from './bodies.ts';
import { type WalletEvent, walletKey } from './events.ts';

/** The callback `event` asks for, or null. */
export function planJob(event: WalletEvent): CallbackJob | null {
  switch (event.type) {
    case 'BetPlaced': {
      const { bet, tx_id } = event.value;
      if (bet.demo || bet.mode !== 'default') return null;
      return { kind: 'bet', txId: tx_id, betTxId: tx_id, amountMinor: bet.amount_minor, bet };
    }
    case 'BetSettled': {
      const s = event.value;
      if (s.outcome !== 'won' || s.bet.demo || s.payout_minor <= 0) return null;
      return {
        kind: 'win',
        txId: s.win_tx_id ?? winTxId(s.tx_id),
        betTxId: s.tx_id,
        amountMinor: s.payout_minor,
        bet: s.bet,
      };
    }
    case 'RollbackRequested': {
      const r = event.value;
      if (r.bet.demo || r.bet.mode === 'free') return null;
      return {
        kind: 'rollback',
        txId: r.tx_id,
        betTxId: r.linked_tx_id,
        amountMinor: r.bet.amount_minor,
        bet: r.bet,
      };
    }
    default:
      return null;
  }
}

/** The record key of a job's outcome events: the bet's player (same key as the event). */
export const jobKey = (job: CallbackJob): string => walletKey(job.bet);

/** CallbackSucceeded for an acknowledged callback. */
export function succeeded(job: CallbackJob, ack: Ack, attempts: number, at: number): WalletEvent {
  return {
    type: 'CallbackSucceeded',
    value: {
      tx_id: job.txId,
      bet_tx_id: job.betTxId,
      kind: job.kind,
      operator_tx_id: ack.operatorTxId,
      old_balance: ack.oldBalance,
      new_balance: ack.newBalance,
      amount_minor: job.amountMinor,
      attempts,
      at,
    },
  };
}

/**
 * Events for the one attempt of a Register Bet (bets are never retried: the player is waiting and
 * an unknown outcome is compensated instead):
 * - ok → CallbackSucceeded{bet};
 * - refused (e.g. 402 INSUFFICIENT_FUNDS) → BetRejected{code} only: no money moved;
 * - failed (timeout, 5xx, malformed answer, connection error) → CallbackFailed{parked:false},
 *   BetRejected{TIMEOUT|OPERATOR_ERROR} and RollbackRequested{bet+2}: the debit may have happened.
 * @throws Error when `job` is not a bet.
 */
export function betOutcome(job: CallbackJob, verdict: Verdict, at: number): WalletEvent[] {
  if (job.kind !== 'bet') throw new Error(`betOutcome: job kind ${job.kind}`);
  if (verdict.type === 'ok') return [succeeded(job, verdict.ack, 1, at)];
  if (verdict.type === 'refused')
    return [
      { type: 'BetRejected', value: { tx_id: job.txId, code: verdict.code, reason: verdict.reason, at } },
    ];
  return [
    failed(job, 1, verdict.reason, false, at),
    { type: 'BetRejected', value: { tx_id: job.txId, code: verdict.code, reason: verdict.reason, at } },
    {
      type: 'RollbackRequested',
      value: {
        tx_id: rollbackTxId(job.txId),
        linked_tx_id: job.txId,
        bet: job.bet,
        reason: `bet callback ${verdict.code}: ${verdict.reason}`,
        at,
      },
    },
  ];
}

/** BetRejected for a bet that could not even be sent (unknown operator or session): nothing moved. */
export function betNotSent(job: CallbackJob, code: string, reason: string, at: number): WalletEvent {
  return { type: 'BetRejected', value: { tx_id: job.txId, code, reason, at } };
}

/** CallbackFailed; `parked` when retries are used up and the record went to the dead-letter topic. */
export function failed(
  job: CallbackJob,
  attempts: number,
  error: string,
  parked: boolean,
  at: number,
): WalletEvent {
  return {
    type: 'CallbackFailed',
    value: {
      tx_id: job.txId,
      bet_tx_id: job.betTxId,
      kind: job.kind,
      attempts,
      error: error.slice(0, 500),
      parked,
      at,
    },
  };
}
