/**
 * Settlement as two instances in one process on a real broker and Postgres: the
 * wallet partitions are split between them, each bet across all partitions is settled exactly
 * once while rounds finish before, during and after one instance leaves; a bet whose round was
 * stored while its partition moved is settled by the instance that takes the partition; an
 * instance whose partition another one claimed decides nothing for it until it claims it back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../lib/log/kafka.ts';
import { walletKey } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import type { BetState } from '../../rules/bets/settle.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  succeeded,
  T0,
  tallySettlements,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';
import { claimPartitions, partitionOfKey } from './ownership.ts';
import { buildSettlement, type Settlement } from './settlement.ts';

const PARTITIONS = 6;
const ROUNDS = 8;
const PLAYERS = 30;
let e: WalletTestEnv;
let a: Settlement;
let b: Settlement | undefined;
const logger = createLogger('t', 'silent');
// A client of its own per instance, silent: rebalances are expected here.
const build = () =>
  buildSettlement({ ...e, kafka: createKafka(e.config, 'scale', logger), logger, now: () => T0 + 60_000 });

beforeAll(async () => {
  e = await createWalletTestEnv('scale', { TOPIC_PARTITIONS: String(PARTITIONS) });
  a = build();
  await a.start();
  await waitFor('the first instance to claim every partition', () =>
    a.partitions().length === PARTITIONS ? true : undefined,
  );
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await e?.close();
});

const settledCounts = async () => tallySettlements(await e.readWallet());

const doubleRound = (seq: number) =>
  round('double', seq, T0 + seq * 10_000 + 5000, {
    game: 'double',
    color: seq % 2 ? 'red' : 'black',
    number: seq % 2 ? 1 : 8,
  });
const appended = async (s: Settlement) =>
  (await s.metrics.appended.get()).values.reduce((n, v) => n + v.value, 0);

describe('settlement scaled out to two instances', () => {
  it('splits the wallet partitions and settles every bet once while an instance leaves', async () => {
    const ids: number[] = [];
    for (let r = 1; r <= ROUNDS; r++)
      for (let i = 0; i < PLAYERS; i++) {
        const tx = (r * 1000 + i) * 4;
        ids.push(tx);
        const bet = placed(tx, 'double', r, { user_id: `s-${i}`, placedAt: T0 + r * 10_000 });
        await e.append(bet.value.bet, [bet, succeeded(tx, 'bet', '50.00')]);
      }
    const players = new Set(ids.map((tx) => partitionOfKey(`op-1:s-${(tx / 4) % 1000}`, PARTITIONS)));
    expect(players.size).toBe(PARTITIONS); // the bets are on every wallet partition

    b = build();
    await b.start();
    const split = await waitFor('the partitions split between the two', () => {
      const [pa, pb] = [a.partitions(), (b as Settlement).partitions()];
      const all = new Set([...pa, ...pb]);
      return pa.length > 0 && pb.length > 0 && all.size === PARTITIONS && pa.length + pb.length === PARTITIONS
        ? { pa, pb }
        : undefined;
    });
    expect(split.pa.filter((p) => split.pb.includes(p))).toEqual([]);

    await e.appendRounds([1, 2, 3, 4].map(doubleRound));
    await waitFor(
      'rounds 1-4 settled',
      async () => ((await settledCounts()).settled.size >= 4 * PLAYERS ? true : undefined),
      30_000,
      200,
    );
    expect(await appended(a)).toBeGreaterThan(0);
    expect(await appended(b)).toBeGreaterThan(0);

    // Rounds 5-8 finish while the second instance leaves and its partitions move.
    const leaving = b.stop();
    for (let r = 5; r <= ROUNDS; r++) {
      await e.appendRounds([doubleRound(r)]);
      await new Promise((res) => setTimeout(res, 150));
    }
    await leaving;
    b = undefined;
    await waitFor('the first instance to hold every partition again', () =>
      a.partitions().length === PARTITIONS ? true : undefined,
    );
    const done = await waitFor(
      'every bet settled',
      async () => {
        const got = await settledCounts();
        return got.settled.size >= ids.length ? got : undefined;
      },
      60_000,
      300,
    );
    await new Promise((res) => setTimeout(res, 1500)); // a late duplicate would show up here
    const final = await settledCounts();
    expect(final.other).toBe(0);
    expect([...final.settled.values()].every((n) => n === 1)).toBe(true);
    expect([...final.settled.keys()].sort((x, y) => x - y)).toEqual(ids);
    for (const tx of ids) expect(done.outcomes.get(tx)).toBe(Math.floor(tx / 4000) % 2 ? 'won' : 'lost'); // red wins on odd rounds
    await waitFor('the outbox empty', async () => {
      const [{ n }] = (await e.sql`select count(*)::int as n from settlement_outbox`) as unknown as [
        { n: number },
      ];
      return n === 0 ? true : undefined;
    });
  });

  it('settles a bet whose round was stored while its partition had no owner, on takeover', async () => {
    const tx = 90_000;
    const bet = placed(tx, 'double', 50, { user_id: 'moved' });
    const p = partitionOfKey(walletKey(bet.value.bet), PARTITIONS);
    const state: BetState = { placed: bet.value, status: 'counted', debited: true, rollback: false };
    // As another instance leaves them: the round stored, the bet open, nothing of either on the log.
    const r = doubleRound(51);
    await e.sql`insert into settlement_rounds (game, round_id, finished_at, result)
      values ('double', ${bet.value.bet.round_id}, ${r.finished_at}, ${e.sql.json(r.result)})`;
    await e.sql`insert into settlement_bets (tx_id, game, round_id, status, state, wallet_partition)
      values (${tx}, 'double', ${bet.value.bet.round_id}, 'counted', ${e.sql.json(JSON.parse(JSON.stringify(state)))}, ${p})`;
    b = build();
    await b.start(); // a rebalance: whoever gets partition p claims and sweeps it
    await waitFor(
      'the bet settled',
      async () => ((await settledCounts()).settled.get(tx) === 1 ? true : undefined),
      30_000,
      200,
    );
    await b.stop();
    b = undefined;
    await waitFor('every partition back', () => (a.partitions().length === PARTITIONS ? true : undefined));
    await new Promise((res) => setTimeout(res, 1000));
    expect((await settledCounts()).settled.get(tx)).toBe(1);
  });

  it('decides nothing for a partition another instance claimed, and settles it once after claiming it back', async () => {
    const tx = 91_000;
    const bet = placed(tx, 'double', 60, { user_id: 'fenced' });
    const p = partitionOfKey(walletKey(bet.value.bet), PARTITIONS);
    await e.append(bet.value.bet, [bet, succeeded(tx, 'bet', '40.00')]);
    await waitFor('the bet counted', async () => {
      const rows = await e.sql`select 1 from settlement_bets where tx_id = ${tx} and status = 'counted'`;
      return rows.length === 1 ? true : undefined;
    });
    await claimPartitions(e.sql, 'a stale claim', [p]); // as if another instance took it
    await e.appendRounds([doubleRound(61), { ...doubleRound(60), finished_at: T0 + 605_000 }]);
    await waitFor(
      'the partition given up',
      () => (a.partitions().includes(p) ? undefined : true),
      30_000,
      50,
    );
    await new Promise((res) => setTimeout(res, 1500));
    expect((await settledCounts()).settled.get(tx)).toBeUndefined();

    // The group still gives this instance the partition: its next batch claims it back and sweeps.
    const next = placed(tx + 4, 'double', 62, { user_id: 'fenced' });
    await e.append(next.value.bet, [next]);
    await waitFor(
      'the bet settled after the claim back',
      async () => ((await settledCounts()).settled.get(tx) === 1 ? true : undefined),
      30_000,
      200,
    );
    expect(a.partitions()).toContain(p);
    await new Promise((res) => setTimeout(res, 1000));
    expect((await settledCounts()).settled.get(tx)).toBe(1);
  });
});
