/**
 * The order in which callbacks waiting for an operator are sent (services/wallet-saga/send-queue.ts):
 * the ones a player is waiting on before the ones nobody waits on. A bet's debit (the player's bet),
 * a win (the player's money) and a rollback (a refund of a stake the player no longer has) are
 * sent first come, first served among themselves; a lost bet's round close (a zero-amount win or a
 * round-end call) only tells the operator the round is over, so it yields to all
 * of them. Nothing is dropped: a close waits only while a callback of a higher priority waits for
 * the same operator.
 *
 * Measured (docs/decisions/money/0003-who-goes-first-to-the-operator.md): putting debits above wins made
 * the last wins of a round wait behind the next round's debits (round end → win p99 up by a
 * fifth), so debits and payouts share one priority.
 */
import type { CallbackKind } from './bodies.ts';

const PRIORITY: Readonly<Record<CallbackKind, number>> = { bet: 2, win: 2, rollback: 2, close: 1 };

/** The send priority of a callback of `kind`: higher goes first. */
export const sendPriority = (kind: CallbackKind): number => PRIORITY[kind];
