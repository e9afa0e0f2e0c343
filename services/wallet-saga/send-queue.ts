/**
 * Who goes first to an operator's wallet ("round end to win credit"). At most
 * `concurrency` callbacks are in flight to one operator from this instance, and among those
 * waiting, the ones a player waits on go first (rules/wallet/priority.ts): debits, wins and
 * rollbacks in arrival order, then a lost bet's round close, which nobody waits on.
 *
 * Why here and not in the HTTP agent: the agent's queue is first come, first served, so at a
 * round end the closes leased with the wins held the wins back; and a request's timeout ran
 * while it waited there for a socket. Now a callback waits in this queue, in priority order (FIFO
 * within a priority), and its timeout starts when it is sent; the agent has as many sockets as
 * this queue lets through, so it never queues. Built on p-queue (priority and concurrency).
 */
import PQueue from 'p-queue';
import type { CallbackKind } from '../../rules/wallet/bodies.ts';
import { sendPriority } from '../../rules/wallet/priority.ts';

export class SendQueue {
  private readonly queues = new Map<string, PQueue>();

  /** @param concurrency callbacks in flight at once to one operator (>= 1). */
  constructor(private readonly concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be an integer >= 1 (got ${concurrency})`);
  }

  /**
   * Runs `send` when one of `operatorId`'s slots is free and no callback of a higher priority
   * waits for it.
   * @returns what `send` returns; @throws what it throws.
   */
  run<T>(operatorId: string, kind: CallbackKind, send: () => Promise<T>): Promise<T> {
    let q = this.queues.get(operatorId);
    if (!q) {
      q = new PQueue({ concurrency: this.concurrency });
      this.queues.set(operatorId, q);
    }
    return q.add(send, { priority: sendPriority(kind) });
  }

  /** Callbacks waiting for a slot (all operators). */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.size;
    return n;
  }
}
