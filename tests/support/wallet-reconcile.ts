/**
 * Reconciliation of the wallet saga's log with a test operator's ledger (tests/support/wallet-saga.ts),
 * for the wallet fault tests ("every fault ends with a reconciliation that finds nothing lost
 * and nothing doubled"). Not a test file.
 *
 * Per bet (a BetPlaced on the log):
 * - the operator moved each of its transactions (debit tx, credit tx + 1, refund tx + 2) at most once;
 * - what the log says happened is what the operator did: a debit confirmed on the log and not
 *   rolled back is debited there, a credit confirmed on the log is credited there, a rolled-back
 *   bet is refunded when (and only when) it had been debited;
 * - the money rules hold on the log: no RollbackRequested after a won BetSettled or after a lost one
 *   whose debit was confirmed, no win callback succeeded for a bet with a RollbackRequested, at most
 *   one BetSettled outcome;
 * A bet whose debit is parked for ops (a mismatching duplicate) is left out, with its player.
 * And per player, the operator's balance equals what the log alone implies once every callback is
 * complete (a rolled-back bet nets nothing, a confirmed debit costs the stake, a confirmed win pays).
 */
import type { WalletEvent } from '../../lib/log/wallet-events.ts';
import type { TestOperator } from './wallet-saga.ts';

/** The problems found; empty when the two sides agree. */
export function reconcileSaga(
  events: readonly WalletEvent[],
  op: TestOperator,
  startMinor: number,
): string[] {
  const problems: string[] = [];
  const moved = (txId: number) => op.movements.filter((m) => m.txId === String(txId));
  const expectedByUser = new Map<string, number>();
  const bets = events.flatMap((e) => (e.type === 'BetPlaced' && !e.value.bet.demo ? [e.value] : []));
  const opsHold = new Set<string>();
  for (const b of bets) {
    const tx = b.tx_id;
    // A bet whose debit was parked for ops (a duplicate that did not match) is theirs to settle:
    // left out here, and its player's balance with it.
    const parkedDebit = events.some(
      (e) => e.type === 'CallbackFailed' && e.value.tx_id === tx && e.value.kind === 'bet' && e.value.parked,
    );
    if (parkedDebit) {
      opsHold.add(b.bet.user_id);
      continue;
    }
    const mine = events
      .map((e, i) => ({ e, i }))
      .filter(({ e }) => {
        const v = e.value as { tx_id: number; bet_tx_id?: number; linked_tx_id?: number };
        return v.tx_id === tx || v.bet_tx_id === tx || v.linked_tx_id === tx;
      });
    const first = (pred: (e: WalletEvent) => boolean) => mine.find(({ e }) => pred(e))?.i ?? -1;
    const succeeded = (kind: string) =>
      first((e) => e.type === 'CallbackSucceeded' && e.value.kind === kind && e.value.bet_tx_id === tx);
    const won = first((e) => e.type === 'BetSettled' && e.value.outcome === 'won');
    const lost = first((e) => e.type === 'BetSettled' && e.value.outcome === 'lost');
    const rollback = first((e) => e.type === 'RollbackRequested');
    const debitOk = succeeded('bet');
    for (const id of [tx, tx + 1, tx + 2])
      if (moved(id).length > 1) problems.push(`tx ${id}: moved ${moved(id).length} times at the operator`);
    if (won >= 0 && lost >= 0) problems.push(`bet ${tx}: settled both won and lost`);
    if (rollback >= 0 && won >= 0 && rollback > won) problems.push(`bet ${tx}: rollback after a win`);
    if (rollback >= 0 && lost >= 0 && debitOk >= 0 && rollback > lost)
      problems.push(`bet ${tx}: rollback after a settled loss with a confirmed debit`);
    if (rollback >= 0 && succeeded('win') >= 0) problems.push(`bet ${tx}: a win paid on a rolled-back bet`);
    // What moved at the operator against what the log says.
    const debited = moved(tx).length === 1;
    const refunded = moved(tx + 2).length === 1;
    const credit = moved(tx + 1)[0]?.amountMinor ?? 0;
    if (debitOk >= 0 && !debited)
      problems.push(`bet ${tx}: debit confirmed on the log, not booked by the operator`);
    if (debited && debitOk < 0 && rollback < 0)
      problems.push(`bet ${tx}: debited by the operator, neither confirmed nor rolled back on the log`);
    if (debited && rollback >= 0 && !refunded)
      problems.push(`bet ${tx}: rolled back on the log, not refunded`);
    if (refunded && !debited) problems.push(`bet ${tx}: refunded without a debit`);
    if (succeeded('win') >= 0 && moved(tx + 1).length !== 1)
      problems.push(`bet ${tx}: win confirmed, not credited`);
    if (succeeded('win') < 0 && credit > 0) problems.push(`bet ${tx}: credited, not confirmed on the log`);
    // What the player must end with by the log alone, every callback complete: a rolled-back bet
    // nets nothing, a confirmed debit costs the stake, a confirmed win pays its payout.
    const payout = mine.find(({ e }) => e.type === 'BetSettled' && e.value.outcome === 'won');
    const paid = succeeded('win') >= 0 && payout?.e.type === 'BetSettled' ? payout.e.value.payout_minor : 0;
    const net = rollback >= 0 ? 0 : (debitOk >= 0 ? -b.bet.amount_minor : 0) + paid;
    expectedByUser.set(b.bet.user_id, (expectedByUser.get(b.bet.user_id) ?? 0) + net);
  }
  for (const [user, net] of expectedByUser)
    if (!opsHold.has(user) && op.balance(user) !== startMinor + net)
      problems.push(
        `player ${user}: operator balance ${op.balance(user)}, the log implies ${startMinor + net}`,
      );
  return problems;
}
