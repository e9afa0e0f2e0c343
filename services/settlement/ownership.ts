/**
 * Which wallet-transactions partitions this settlement instance settles, and the fence that keeps a
 * stale owner from deciding or appending for them (docs/decisions/money/0005-settlement-scale-out.md; migration 009).
 *
 * The consumer group hands out the wallet partitions. On each assignment the instance claims its
 * partitions in `settlement_partitions`: a claim raises each partition's epoch, and its UPDATE
 * waits for every transaction holding the row FOR SHARE. Every write that decides bets of a
 * partition, and every append of what was decided, holds the row FOR SHARE and goes ahead only at
 * the epoch its instance claimed (`lockEpochs`, `sendFenced`). So once a claim has committed,
 * nothing decided under an older epoch is still being committed or appended, and the new owner
 * finds in the outbox exactly what the previous owner committed without appending (recovery.ts).
 *
 * Within one instance the steps that read and write bets (wallet batches, rounds batches, claims
 * and sweeps) run one at a time (`serial`), so a round read by one consumer and a bet read by the
 * other always meet in Postgres.
 */
import { Partitioners, type PartitionMetadata, type Producer } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import { type WalletEvent, walletKey } from '../../lib/log/wallet-events.ts';
import type { BetState } from '../../rules/bets/settle.ts';

/** An event to append to one wallet partition, decided (or recovered) at the owner's `epoch`. */
export interface Sendable {
  readonly partition: number;
  readonly epoch: bigint;
  readonly key: string;
  readonly value: Buffer;
  readonly event?: WalletEvent;
}

export interface Ownership {
  /** This instance's name in `settlement_partitions.owner` (host, pid and a random suffix). */
  readonly owner: string;
  /** The wallet partitions this instance claimed, with their epochs. */
  epochs(): ReadonlyMap<number, bigint>;
  /** Records claims (claimPartitions). */
  claimed(epochs: ReadonlyMap<number, bigint>): void;
  /** Forgets partitions no longer assigned. */
  drop(partitions: Iterable<number>): void;
  /** Forgets partitions claimed by another instance: each only while still at the epoch given. */
  release(stale: ReadonlyMap<number, bigint>): void;
  /** Runs `fn` once every step queued before it has finished (rejections do not block the queue). */
  serial<T>(fn: () => Promise<T>): Promise<T>;
}

/** The ownership of a new instance named `owner`: nothing claimed. */
export function createOwnership(owner: string): Ownership {
  const epochs = new Map<number, bigint>();
  let tail: Promise<unknown> = Promise.resolve();
  return {
    owner,
    epochs: () => epochs,
    claimed(e) {
      for (const [p, epoch] of e) epochs.set(p, epoch);
    },
    drop(partitions) {
      for (const p of partitions) epochs.delete(p);
    },
    release(stale) {
      for (const [p, e] of stale) if (epochs.get(p) === e) epochs.delete(p);
    },
    serial(fn) {
      const run = tail.then(fn);
      tail = run.catch(() => {});
      return run;
    },
  };
}

/**
 * Claims `partitions` for `owner`: each one's epoch goes up by one (1 for a partition never claimed).
 * Waits for every transaction holding one of the rows FOR SHARE (decisions and appends of an older
 * epoch in flight). Rows are taken in partition order, as every locker of them does.
 * @returns the new epoch of each partition.
 * @throws the postgres.js error (nothing claimed).
 */
export async function claimPartitions(
  sql: Sql,
  owner: string,
  partitions: readonly number[],
): Promise<Map<number, bigint>> {
  if (partitions.length === 0) return new Map();
  const sorted = [...new Set(partitions)].sort((a, b) => a - b);
  const rows = await sql<{ partition: number; epoch: string }[]>`
    insert into settlement_partitions ("partition", epoch, owner)
    select p, 1, ${owner} from unnest(${sorted}::int[]) with ordinality as t(p, n) order by n
    on conflict ("partition") do update
      set epoch = settlement_partitions.epoch + 1, owner = excluded.owner, claimed_at = now()
    returning "partition", epoch::text`;
  return new Map(rows.map((r) => [r.partition, BigInt(r.epoch)]));
}

/**
 * Locks the rows of `partitions` FOR SHARE until the end of the transaction `tx` (a claim of one
 * of them waits until then).
 * @returns the current epoch of each (absent: never claimed).
 */
export async function lockEpochs(tx: Sql, partitions: Iterable<number>): Promise<Map<number, bigint>> {
  const ps = [...new Set(partitions)];
  if (ps.length === 0) return new Map();
  const rows = await tx<{ partition: number; epoch: string }[]>`
    select "partition", epoch::text from settlement_partitions
    where "partition" = any(${ps}::int[]) order by "partition" for share`;
  return new Map(rows.map((r) => [r.partition, BigInt(r.epoch)]));
}

/** The partitions of `fence` (partition → epoch of the writer) whose epoch in `current` is another. */
export function staleIn(fence: ReadonlyMap<number, bigint>, current: ReadonlyMap<number, bigint>): number[] {
  return [...fence].filter(([p, e]) => current.get(p) !== e).map(([p]) => p);
}

/**
 * Appends `items` to `topic` (each to its own partition, acks from all replicas), all but those
 * whose partition was claimed by another instance since they were decided: those stay in the
 * outbox for the new owner's recovery. The partitions' rows are held FOR SHARE during the append,
 * so a claim waits for it to end.
 * @returns those appended, and how many were left to the new owner.
 * @throws the postgres.js or kafkajs error (then nothing is known to be appended; the caller retries).
 */
export async function sendFenced(
  sql: Sql,
  producer: Producer,
  topic: string,
  items: readonly Sendable[],
): Promise<{ sent: readonly Sendable[]; skipped: number }> {
  if (items.length === 0) return { sent: [], skipped: 0 };
  return await sql.begin(async (tx) => {
    const current = await lockEpochs(
      tx as unknown as Sql,
      items.map((i) => i.partition),
    );
    const ok = items.filter((i) => current.get(i.partition) === i.epoch);
    if (ok.length > 0)
      await producer.send({
        topic,
        acks: -1,
        messages: ok.map((i) => ({ key: i.key, value: i.value, partition: i.partition })),
      });
    return { sent: ok, skipped: items.length - ok.length };
  });
}

/** The partition of `key` among `count`, as the producers' default (Java-compatible) partitioner picks it. */
export function partitionOfKey(key: string, count: number): number {
  const partitionMetadata = Array.from({ length: count }, (_, i) => ({ partitionId: i, leader: 0 }));
  return Partitioners.DefaultPartitioner()({
    topic: 'wallet-transactions',
    partitionMetadata: partitionMetadata as unknown as PartitionMetadata[],
    message: { key, value: null },
  });
}

/**
 * Fills in the wallet partition of bets and outbox entries stored before migration 009, from their
 * record key, as the producer placed them on wallet-transactions (`partitionCount` is asked only
 * when there is such a row). Idempotent, and safe beside running instances (they only write rows
 * that have one).
 * @returns how many rows were filled in.
 * @throws the postgres.js error.
 */
export async function backfillPartitions(sql: Sql, partitionCount: () => Promise<number>): Promise<number> {
  const bets = await sql<{ tx_id: string; state: unknown }[]>`
    select tx_id::text, state from settlement_bets where wallet_partition is null`;
  const outbox = await sql<{ type: string; tx_id: string; key: string }[]>`
    select type, tx_id::text, key from settlement_outbox where wallet_partition is null`;
  if (bets.length + outbox.length === 0) return 0;
  const count = await partitionCount();
  const betOf = (j: unknown) => ((typeof j === 'string' ? JSON.parse(j) : j) as BetState).placed.bet;
  if (bets.length > 0)
    await sql`
      update settlement_bets b set wallet_partition = t.p
      from unnest(${bets.map((b) => b.tx_id)}::bigint[],
                  ${bets.map((b) => partitionOfKey(walletKey(betOf(b.state)), count))}::int[]) as t(tx_id, p)
      where b.tx_id = t.tx_id and b.wallet_partition is null`;
  if (outbox.length > 0)
    await sql`
      update settlement_outbox o set wallet_partition = t.p
      from unnest(${outbox.map((o) => o.type)}::text[], ${outbox.map((o) => o.tx_id)}::bigint[],
                  ${outbox.map((o) => partitionOfKey(o.key, count))}::int[]) as t(type, tx_id, p)
      where o.type = t.type and o.tx_id = t.tx_id and o.wallet_partition is null`;
  return bets.length + outbox.length;
}
