/**
 * The events of `wallet-transactions` and `access-sessions` as TypeScript values (
 * docs/contract.md "Topics"): discriminated unions over the generated Avro record types (schemas/, type
 * only). Their encoding is lib/log/wallet-events.ts.
 */
import type {
  BetContext,
  BetPlaced,
  BetRejected,
  BetSettled,
  CallbackFailed,
  CallbackSucceeded,
  RollbackRequested,
  SessionCreated,
  SessionExpired,
  SessionOpened,
} from '../../schemas/generated/avro.ts';

export type {
  BetContext,
  BetPlaced,
  BetRejected,
  BetSettled,
  CallbackFailed,
  CallbackSucceeded,
  RollbackRequested,
  SessionCreated,
  SessionExpired,
  SessionOpened,
};

/** One event of `wallet-transactions`, discriminated by `type`. */
export type WalletEvent =
  | { readonly type: 'BetPlaced'; readonly value: BetPlaced }
  | { readonly type: 'CallbackSucceeded'; readonly value: CallbackSucceeded }
  | { readonly type: 'CallbackFailed'; readonly value: CallbackFailed }
  | { readonly type: 'BetRejected'; readonly value: BetRejected }
  | { readonly type: 'RollbackRequested'; readonly value: RollbackRequested }
  | { readonly type: 'BetSettled'; readonly value: BetSettled };

/** One event of `access-sessions`. */
export type AccessEvent =
  | { readonly type: 'SessionCreated'; readonly value: SessionCreated }
  | { readonly type: 'SessionOpened'; readonly value: SessionOpened }
  | { readonly type: 'SessionExpired'; readonly value: SessionExpired };

/** Record key of a player's wallet events: `operator_id:user_id`. */
export function walletKey(bet: Pick<BetContext, 'operator_id' | 'user_id'>): string {
  return `${bet.operator_id}:${bet.user_id}`;
}
