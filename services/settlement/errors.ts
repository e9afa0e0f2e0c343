/**
 * Errors of settlement's fenced writes (docs/decisions/money/0005-settlement-scale-out.md), on
 * the project's base error. Both are retryable: the write is computed again from fresh state.
 */
import { AppError } from '../../lib/errors.ts';

/**
 * Another instance claimed wallet partitions this one was about to write for, after this one did:
 * nothing of the write was stored. The caller drops (or claims again) those partitions and retries.
 */
export class StaleOwnerError extends AppError {
  constructor(
    /** The wallet-transactions partitions whose epoch moved on, with the epoch the writer held (-1: none). */
    readonly partitions: ReadonlyMap<number, bigint>,
  ) {
    super(
      'SETTLEMENT_STALE_OWNER',
      `wallet partitions ${[...partitions.keys()].join(', ')} were claimed by another instance`,
      { retryable: true },
    );
  }
}

/**
 * A bet row changed between this instance's read and its write (its version moved on): nothing of
 * the write was stored. The caller reads the bets again and retries.
 */
export class StaleBetError extends AppError {
  constructor(expected: number, written: number) {
    super(
      'SETTLEMENT_STALE_BET',
      `${expected - written} of ${expected} bet rows changed since they were read`,
      {
        retryable: true,
      },
    );
  }
}
