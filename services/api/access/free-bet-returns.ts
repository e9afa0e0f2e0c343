/**
 * Free bets given back: a free bet is registered at the operator as a bet that
 * moves no money; when that bet is rejected — the operator refused the registration, or settlement
 * cancelled it (placed after its round's betting closed) — the player gets the free bet back.
 * A spec of the checkpointed consumer (lib/log/checkpointed-consumer.ts) on `wallet-transactions`
 * in the API's group API_FREE_BET_GROUP: for each BetRejected of a redeemed free bet
 * (free_bet_redemptions, written by POST /play/bets), one statement marks the redemption returned
 * and adds one to its grant's quantity_left, with the checkpoint; a redemption is returned once.
 * The API owns free_bets and free_bet_redemptions, so it is their only writer.
 */
import type { CheckpointKey } from '../../../lib/db/checkpoints.ts';
import { checkpointUpsert } from '../../../lib/db/checkpoints.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { ConsumerSpec } from '../../../lib/log/consumer-spec.ts';
import { decodeWalletEvent } from '../../../lib/log/wallet-events.ts';

/** Name of the consumer's rows in projection_checkpoints. */
export const FREE_BET_RETURNS = 'free-bet-returns';

/**
 * Returns the free bets of the rejected bets `txIds` (those that redeemed one and were not yet
 * returned) and moves the checkpoint of `key` to `next`, in one statement.
 * @returns how many free bets were returned.
 * @throws the postgres.js error; nothing is then stored.
 */
export async function returnFreeBets(
  sql: Sql,
  key: CheckpointKey,
  txIds: readonly number[],
  next: bigint,
): Promise<number> {
  const rows = await sql<{ n: string }[]>`
    with returned as (
      update free_bet_redemptions set returned_at = now()
      where tx_id = any(${txIds.map(String)}::bigint[]) and returned_at is null
      returning grant_id
    ), grants as (
      update free_bets f set quantity_left = f.quantity_left + r.n
      from (select grant_id, count(*)::int as n from returned group by grant_id) r
      where f.grant_id = r.grant_id
      returning 1
    ), checkpoint as (
      ${checkpointUpsert(sql, key, next)}
    )
    select (select count(*) from returned)::text as n from checkpoint`;
  return Number(rows[0]?.n ?? 0);
}

/** The consumer's spec: BetRejected tx ids in, free bets returned. */
export function freeBetReturnsSpec(onReturned?: (n: number) => void): ConsumerSpec<number | null> {
  return {
    name: FREE_BET_RETURNS,
    topics: ['walletTransactions'],
    chunkSize: 1000,
    decode: (m) => {
      const e = decodeWalletEvent(m.value);
      return e.type === 'BetRejected' ? e.value.tx_id : null;
    },
    async write(sql, key, events, next) {
      const ids = events.filter((e): e is number => e !== null);
      const n = await returnFreeBets(sql, key, ids, next);
      return {
        checkpoint: next,
        afterCommit: async () => {
          if (n > 0) onReturned?.(n);
        },
      };
    },
  };
}
