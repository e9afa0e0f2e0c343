/**
 * The fence of settlement's scale-out (ownership.ts, store.ts) on a real broker and Postgres: a
 * claim raises a partition's epoch and waits for an append in flight under the old one; a write
 * or append at an old epoch, or over a bet row that changed, stores and appends nothing; the
 * wallet partition filled in on old rows is the one the producer picked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../lib/db/pool.ts';
import { readRange } from '../../lib/log/kafka.ts';
import { encodeEvent, walletKey } from '../../lib/log/wallet-events.ts';
import type { BetState } from '../../rules/bets/settle.ts';
import { createWalletTestEnv, placed, T0, type WalletTestEnv } from '../../tests/support/settlement.ts';
import { StaleBetError, StaleOwnerError } from './errors.ts';
import {
  backfillPartitions,
  claimPartitions,
  lockEpochs,
  partitionOfKey,
  type Sendable,
  sendFenced,
} from './ownership.ts';
import { writeBatch } from './write.ts';

const PARTITIONS = 4;
let e: WalletTestEnv;
beforeAll(async () => {
  e = await createWalletTestEnv('fence', { TOPIC_PARTITIONS: String(PARTITIONS) });
});
afterAll(async () => {
  await e?.close();
});

const stateOf = (txId: number): BetState => ({
  placed: placed(txId, 'double', 1).value,
  status: 'counted',
  debited: true,
  rollback: false,
});
const settledOf = (txId: number): Sendable & { event: NonNullable<Sendable['event']> } => {
  const bet = placed(txId, 'double', 1).value.bet;
  const event = {
    type: 'BetSettled' as const,
    value: { tx_id: txId, bet, outcome: 'lost' as const, payout_minor: 0, win_tx_id: null, at: T0 },
  };
  const partition = partitionOfKey(walletKey(bet), PARTITIONS);
  return { partition, epoch: 0n, key: walletKey(bet), value: encodeEvent(event), event };
};

describe('settlement partition claims', () => {
  it('raise the epoch and wait for a transaction holding the partition for share', async () => {
    expect(await claimPartitions(e.sql, 'a', [1, 0])).toEqual(
      new Map([
        [0, 1n],
        [1, 1n],
      ]),
    );
    expect(await claimPartitions(e.sql, 'b', [1])).toEqual(new Map([[1, 2n]]));
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = e.sql.begin(async (tx) => {
      await lockEpochs(tx as unknown as Sql, [0]);
      locked();
      await held;
    });
    await isLocked;
    let claimed: Map<number, bigint> | undefined;
    const claim = claimPartitions(e.sql, 'c', [0]).then((m) => {
      claimed = m;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(claimed).toBeUndefined(); // waiting for the holder
    release();
    await Promise.all([holder, claim]);
    expect(claimed).toEqual(new Map([[0, 2n]]));
    const [row] = await e.sql<
      { owner: string }[]
    >`select owner from settlement_partitions where "partition" = 0`;
    expect(row?.owner).toBe('c');
  });

  it('make a write at an old epoch, or over a changed bet row, store nothing', async () => {
    const key = { projection: 'settlement', topic: e.walletTopic, partition: 3 };
    const [epoch3] = (await claimPartitions(e.sql, 'a', [3])).values();
    const bet = (txId: number, version: number) =>
      new Map([[txId, { state: stateOf(txId), partition: 3, version }]]);
    const write = (txId: number, version: number, epoch: bigint) =>
      writeBatch(
        e.sql,
        { bets: bet(txId, version), rounds: [], emitted: [], confirmed: [], fence: new Map([[3, epoch]]) },
        { key, next: 10n },
      );
    await claimPartitions(e.sql, 'b', [3]);
    const stale = await write(500, 0, epoch3 as bigint).catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(StaleOwnerError);
    expect([...(stale as StaleOwnerError).partitions]).toEqual([[3, epoch3]]);
    expect(await e.sql`select 1 from settlement_bets where tx_id = 500`).toHaveLength(0);
    expect(await e.sql`select 1 from projection_checkpoints where "partition" = 3`).toHaveLength(0);

    const current = (epoch3 as bigint) + 1n;
    await write(500, 0, current); // a new row: version 1
    await expect(write(500, 0, current)).rejects.toBeInstanceOf(StaleBetError); // read before it existed
    await write(500, 1, current);
    const [row] = await e.sql<
      { version: string }[]
    >`select version::text from settlement_bets where tx_id = 500`;
    expect(row?.version).toBe('2');
  });

  it('append only what was decided at the current epoch of its partition', async () => {
    const ours = settledOf(600);
    const theirs = [601, 602, 603, 604, 605, 606, 607]
      .map(settledOf)
      .find((s) => s.partition !== ours.partition) as ReturnType<typeof settledOf>;
    const epochs = await claimPartitions(e.sql, 'a', [ours.partition, theirs.partition]);
    await claimPartitions(e.sql, 'b', [theirs.partition]);
    const { sent, skipped } = await sendFenced(e.sql, e.producer, e.walletTopic, [
      { ...ours, epoch: epochs.get(ours.partition) as bigint },
      { ...theirs, epoch: epochs.get(theirs.partition) as bigint },
    ]);
    expect([sent.map((s) => s.event?.value.tx_id), skipped]).toEqual([[600], 1]);
    expect((await e.readWallet()).map((x) => x.value.tx_id)).toEqual([600]);
  });

  it('fill in the partition of old rows as the producer placed their records', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => 700 + i * 4);
    for (const id of ids) {
      const b = placed(id, 'double', 1);
      await e.append(b.value.bet, [b]);
    }
    const actual = new Map<number, number>();
    const from = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, 0n]));
    await readRange(e.kafka, e.walletTopic, from, ({ partition, message }) => {
      const key = message.key?.toString() ?? '';
      for (const id of ids)
        if (walletKey(placed(id, 'double', 1).value.bet) === key) actual.set(id, partition);
    });
    expect(new Set(actual.values()).size).toBeGreaterThan(1); // spread over partitions
    for (const id of ids)
      await e.sql`insert into settlement_bets (tx_id, game, round_id, status, state)
        values (${id}, 'double', 1, 'placed', ${e.sql.json(JSON.parse(JSON.stringify(stateOf(id))))})`;
    expect(await backfillPartitions(e.sql, async () => PARTITIONS)).toBe(ids.length);
    const rows = await e.sql<{ tx_id: string; wallet_partition: number }[]>`
      select tx_id::text, wallet_partition from settlement_bets where tx_id = any(${ids}::bigint[])`;
    expect(new Map(rows.map((r) => [Number(r.tx_id), r.wallet_partition]))).toEqual(actual);
    expect(await backfillPartitions(e.sql, async () => PARTITIONS)).toBe(0);
  });
});
