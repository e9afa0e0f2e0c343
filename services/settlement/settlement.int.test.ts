/**
 * The settlement processor on a real broker and Postgres: every game's payout, round closed
 * (cancelled; never a rollback, which is the bet's process manager's), free and demo bets, a saga-rejected bet, a bet read after
 * its round, and a restart re-reading from the checkpoints without a second BetSettled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  succeeded,
  T0,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';
import { buildSettlement, type Settlement } from './settlement.ts';

let e: WalletTestEnv;
let s: Settlement | undefined;
const logger = createLogger('t', 'silent');
const start = async () => {
  s = buildSettlement({ ...e, logger, now: () => T0 + 60_000 });
  await s.start();
};

beforeAll(async () => {
  e = await createWalletTestEnv('settle', { TOPIC_PARTITIONS: '2' });
  await start();
});
afterAll(async () => {
  await s?.stop();
  await e?.close();
});

const ours = (events: WalletEvent[]) =>
  events
    .filter((x) => x.type === 'BetSettled' || x.type === 'BetRejected' || x.type === 'RollbackRequested')
    .map((x) => {
      const v = x.value as unknown as Record<string, unknown>;
      return [x.type, v.tx_id, v.outcome ?? v.code ?? v.linked_tx_id, v.payout_minor ?? null];
    })
    .sort((a, b) => Number(a[1]) - Number(b[1]) || String(a[0]).localeCompare(String(b[0])));

async function settle(expected: number): Promise<unknown[][]> {
  return await waitFor(
    `${expected} settlement events`,
    async () => {
      const got = ours(await e.readWallet());
      return got.length >= expected ? got : undefined;
    },
    30_000,
    300,
  );
}

describe('settlement processor', () => {
  it('settles debited bets of every game with the pure payout, and cancels late bets', async () => {
    const bets = [
      placed(1000, 'crash', 1), // cash-out 2.00 on a 2.00 bust: won 20.00
      placed(1004, 'crash', 1, { selection: { 'casino.wallet.CrashBet': { auto_cashout: '2.01' } } }),
      placed(1008, 'double', 1, { amount_minor: 150 }), // red on red: 3.00
      placed(1012, 'double', 1, { selection: { 'casino.wallet.DoubleBet': { color: 'white' } } }),
      placed(1016, 'slot', 1, { amount_minor: 333 }), // 3.00x: 9.99
      placed(1020, 'wall-street', 1, { amount_minor: 7 }), // up on up: floor(13.72) = 13
      placed(1024, 'wall-street', 1, { placedAt: T0 + 5000 }), // at finished_at: closed, debited
      placed(1028, 'wall-street', 1, { placedAt: T0 + 6000, mode: 'free' }), // closed, never registered
      placed(1032, 'slot', 1, { mode: 'free' }), // free: counts once registered, 10.00 × 3
      placed(1036, 'double', 1, { demo: true, selection: { 'casino.wallet.DoubleBet': { color: 'black' } } }),
      placed(1040, 'crash', 1), // refused by the operator: never settled
    ];
    for (const b of bets) {
      const follow: WalletEvent[] = [];
      // Real-money bets are debited and the free bet 1032 registered; 1028 never is.
      if (!b.value.bet.demo && b.value.tx_id !== 1028)
        follow.push(
          b.value.tx_id === 1040
            ? {
                type: 'BetRejected',
                value: { tx_id: 1040, code: 'INSUFFICIENT_FUNDS', reason: '402', at: T0 },
              }
            : succeeded(b.value.tx_id, 'bet', '90.00', b.value.bet.amount_minor),
        );
      await e.append(b.value.bet, [b, ...follow]);
    }
    await e.appendRounds([
      round('crash', 1, T0 + 5000, { game: 'crash', point: '2.00' }),
      round('double', 1, T0 + 5000, { game: 'double', color: 'red', number: 3 }),
      round('slot', 1, T0 + 5000, { game: 'slot', reels: ['cherry', 'cherry', 'lemon'], multiplier: '3.00' }),
      round('wall-street', 1, T0 + 5000, { game: 'wall-street', trending: 'up' }),
    ]);
    // 1024's rollback is the bet's process manager's (rules/wallet/process.ts), not settlement's.
    expect(await settle(11)).toEqual([
      ['BetSettled', 1000, 'won', 2000],
      ['BetSettled', 1004, 'lost', 0],
      ['BetSettled', 1008, 'won', 300],
      ['BetSettled', 1012, 'lost', 0],
      ['BetSettled', 1016, 'won', 999],
      ['BetSettled', 1020, 'won', 13],
      ['BetRejected', 1024, 'ROUND_CLOSED', null],
      ['BetRejected', 1028, 'ROUND_CLOSED', null],
      ['BetSettled', 1032, 'won', 3000],
      ['BetSettled', 1036, 'lost', 0],
      ['BetRejected', 1040, 'INSUFFICIENT_FUNDS', null],
    ]);
    const won = (await e.readWallet()).find((x) => x.type === 'BetSettled' && x.value.tx_id === 1000);
    expect(won?.value).toMatchObject({ win_tx_id: 1001, at: T0 + 60_000, bet: { user_id: 'u-1000' } });
  });

  it('joins a bet read after its round finished, and one debited only after the round', async () => {
    await e.appendRounds([round('wall-street', 2, T0 + 5000, { game: 'wall-street', trending: 'down' })]);
    await new Promise((r) => setTimeout(r, 1500)); // the round is stored before the bets arrive
    const b = placed(2000, 'wall-street', 2, {
      selection: { 'casino.wallet.WallStreetBet': { trend: 'down' } },
    });
    await e.append(b.value.bet, [b]);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await settle(11)).filter((x) => x[1] === 2000)).toEqual([]); // waits for the debit
    await e.append(b.value.bet, [succeeded(2000, 'bet', '80.00')]);
    expect((await settle(12)).filter((x) => x[1] === 2000)).toEqual([['BetSettled', 2000, 'won', 1960]]);
  });

  it('a restart re-reading every record from offset 0 settles nothing twice', async () => {
    await s?.stop();
    await e.sql`delete from projection_checkpoints where projection = 'settlement'`;
    const late = placed(3000, 'crash', 3);
    await e.append(late.value.bet as BetContext, [late, succeeded(3000, 'bet', '70.00')]);
    await e.appendRounds([round('crash', 3, T0 + 9000, { game: 'crash', point: '1.00' })]);
    await start();
    const all = await settle(13);
    expect(all.filter((x) => x[1] === 3000)).toEqual([['BetSettled', 3000, 'lost', 0]]);
    await new Promise((r) => setTimeout(r, 2000));
    const again = ours(await e.readWallet());
    expect(again).toHaveLength(13);
    expect(new Set(again.map((x) => `${x[0]}:${x[1]}`)).size).toBe(13);
  });
});
