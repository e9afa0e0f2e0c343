/**
 * Settlement and the round lifecycle on the real broker and Postgres: a
 * BetPlaced appended after its round's BettingClosed (broker append times, LogAppendTime) is
 * cancelled and, if debited, rolled back, never settled, whatever its placed_at says; a crash bet
 * cashed out by hand is paid the engine's multiplier (or the auto cash-out when lower).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import type { BetCashedOut, BettingClosed, RoundOpened } from '../../rules/rounds/round.ts';
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
let s: Settlement;

beforeAll(async () => {
  e = await createWalletTestEnv('lifecycle', { TOPIC_PARTITIONS: '1' });
  s = buildSettlement({ ...e, logger: createLogger('t', 'silent'), now: () => T0 + 60_000 });
  await s.start();
});
afterAll(async () => {
  await s?.stop();
  await e?.close();
});

const tick = () => new Promise((r) => setTimeout(r, 30)); // distinct broker append times
const idOf = (game: GameSlug, seq: number) => (gameBySlug(game)?.id ?? 0) * 1_000_000_000_000 + seq;
const opened = (game: GameSlug, seq: number): RoundOpened => ({
  type: 'RoundOpened',
  round_id: idOf(game, seq),
  game_id: gameBySlug(game)?.id ?? 0,
  game_slug: game,
  game_type: gameBySlug(game)?.type ?? 'multiplier',
  betting_opens_at: T0,
  betting_closes_at: T0 + 10_000,
  chain_epoch: 0,
  chain_index: seq,
  commitment: 'c'.repeat(64),
  speed: 1,
});
const closed = (game: GameSlug, seq: number): BettingClosed => ({
  type: 'BettingClosed',
  round_id: idOf(game, seq),
  game_id: gameBySlug(game)?.id ?? 0,
  game_slug: game,
  at: T0 + 10_000,
});

async function settledOf(txIds: number[]): Promise<unknown[][]> {
  return await waitFor(
    'the bets settled or cancelled',
    async () => {
      const got = (await e.readWallet())
        .filter((x) => ['BetSettled', 'BetRejected', 'RollbackRequested'].includes(x.type))
        .map((x) => {
          const v = x.value as unknown as Record<string, unknown>;
          return [x.type, v.tx_id, v.outcome ?? v.code ?? v.linked_tx_id, v.payout_minor ?? null];
        })
        .filter((x) => txIds.some((id) => x[1] === id || x[1] === id + 2));
      return got.length >= txIds.length ? got : undefined;
    },
    30_000,
    200,
  );
}

describe('settlement on the round lifecycle', () => {
  it('cancels a bet appended after BettingClosed even with a placed_at inside the window', async () => {
    await e.appendRoundEvents([opened('double', 7)]);
    const inTime = placed(7000, 'double', 7, { placedAt: T0 + 1000 });
    await e.append(inTime.value.bet, [inTime, succeeded(7000, 'bet', '90.00')]);
    await tick();
    await e.appendRoundEvents([closed('double', 7)]);
    await tick();
    // A slow API, or one whose clock is behind: placed_at says "in the window", the log says late.
    const late = placed(7004, 'double', 7, { placedAt: T0 + 2000 });
    await e.append(late.value.bet, [late, succeeded(7004, 'bet', '80.00')]);
    await tick();
    await e.appendRounds([round('double', 7, T0 + 15_000, { game: 'double', color: 'red', number: 2 })]);
    const got = await settledOf([7000, 7004]);
    expect(got).toEqual(
      expect.arrayContaining([
        ['BetSettled', 7000, 'won', 2000],
        ['BetRejected', 7004, 'ROUND_CLOSED', null],
      ]),
    );
    expect(got.filter((x) => x[0] === 'BetSettled' && x[1] === 7004)).toEqual([]);
    // Its rollback is the bet's process manager's (rules/wallet/process.ts), not settlement's.
    expect(got.filter((x) => x[0] === 'RollbackRequested')).toEqual([]);
  });

  it('judges a bet against the first of two BettingClosed of its round, as the API does', async () => {
    // A close the engine appended twice (a retry through a broker failover): the betting window
    // closed when the first copy reached the log. The API answers a bet appended between the two
    // copies 409 (lib/log/round-phases.ts closedAppendedAt keeps the earliest), so settlement must
    // cancel it, also when the second copy comes in one batch with the RoundFinished.
    await e.appendRoundEvents([opened('double', 9)]);
    const inTime = placed(9000, 'double', 9, { placedAt: T0 + 1000 });
    await e.append(inTime.value.bet, [inTime, succeeded(9000, 'bet', '90.00')]);
    await tick();
    await e.appendRoundEvents([closed('double', 9)]);
    await tick();
    const between = placed(9004, 'double', 9, { placedAt: T0 + 2000 });
    await e.append(between.value.bet, [between, succeeded(9004, 'bet', '80.00')]);
    // Settlement holds both bets before the round finishes (the rounds batch decides them).
    await waitFor(
      'settlement read both bets',
      async () => {
        const [r] = await e.sql<{ n: number }[]>`
          select count(*)::int as n from settlement_bets where tx_id in (9000, 9004)`;
        return r?.n === 2 ? true : undefined;
      },
      30_000,
      50,
    );
    await tick();
    await e.appendRoundEvents([
      closed('double', 9),
      round('double', 9, T0 + 15_000, { game: 'double', color: 'red', number: 2 }),
    ]);
    const got = await settledOf([9000, 9004]);
    expect(got).toEqual(
      expect.arrayContaining([
        ['BetSettled', 9000, 'won', 2000],
        ['BetRejected', 9004, 'ROUND_CLOSED', null],
      ]),
    );
    expect(got.filter((x) => x[0] === 'BetSettled' && x[1] === 9004)).toEqual([]);
  });

  it('pays a manual cash-out its multiplier, or the auto cash-out when that came first', async () => {
    await e.appendRoundEvents([opened('crash', 8)]);
    const bets = [
      placed(8000, 'crash', 8, { selection: { 'casino.wallet.CrashBet': { auto_cashout: '10.00' } } }),
      placed(8004, 'crash', 8, { selection: { 'casino.wallet.CrashBet': { auto_cashout: '2.00' } } }),
      placed(8008, 'crash', 8, { selection: { 'casino.wallet.CrashBet': { auto_cashout: '2.00' } } }),
    ];
    for (const b of bets) await e.append(b.value.bet, [b, succeeded(b.value.tx_id, 'bet', '90.00')]);
    await tick();
    const cashOut = (tx: number, multiplier: string): BetCashedOut => ({
      type: 'BetCashedOut',
      round_id: idOf('crash', 8),
      game_slug: 'crash',
      tx_id: tx,
      multiplier,
      at: T0 + 11_000,
    });
    await e.appendRoundEvents([closed('crash', 8), cashOut(8000, '1.50'), cashOut(8008, '2.50')]);
    await e.appendRounds([round('crash', 8, T0 + 30_000, { game: 'crash', point: '3.00' })]);
    expect(await settledOf([8000, 8004, 8008])).toEqual(
      expect.arrayContaining([
        ['BetSettled', 8000, 'won', 1500], // cashed out by hand at 1.50
        ['BetSettled', 8004, 'won', 2000], // auto at 2.00
        ['BetSettled', 8008, 'won', 2000], // auto at 2.00 came before the hand at 2.50
      ]),
    );
    const events: WalletEvent[] = await e.readWallet();
    expect(
      events.filter((x) => x.type === 'BetSettled' && [8000, 8004, 8008].includes(x.value.tx_id)),
    ).toHaveLength(3);
  });
});
