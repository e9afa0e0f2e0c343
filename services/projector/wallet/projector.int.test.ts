/**
 * The wallet projector on a real broker and Postgres, "given these events, then these rows":
 * a won bet and its win, a timed-out bet with its rollback, free and demo bets (virtual balance),
 * a win acknowledged before its BetSettled is read, and idempotence under duplicates and a full
 * replay of the topic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BetContext, WalletEvent } from '../../../lib/log/wallet-events.ts';
import { createLogger } from '../../../lib/logger.ts';
import { waitFor } from '../../../tests/support/poll.ts';
import {
  createWalletTestEnv,
  placed,
  succeeded,
  T0,
  type WalletTestEnv,
} from '../../../tests/support/settlement.ts';
import { buildWalletProjector, type WalletProjector } from './projector.ts';

let e: WalletTestEnv;
let p: WalletProjector | undefined;
const start = async () => {
  p = buildWalletProjector({ ...e, logger: createLogger('t', 'silent') });
  await p.start();
};
beforeAll(async () => {
  e = await createWalletTestEnv('wallet', { TOPIC_PARTITIONS: '2' });
  await start();
});
afterAll(async () => {
  await p?.stop();
  await e?.close();
});

type Row = { tx_id: number; kind: string; status: string; round_status: string; amount_minor: number };
const rows = () =>
  e.sql<(Row & Record<string, unknown>)[]>`
    select tx_id::int, bet_tx_id::int, kind, amount_minor::int, status, round_status, attempts, operator_tx_id,
           new_balance, detail, demo, requested_at, updated_at
    from wallet_transactions order by tx_id`;
const brief = async () =>
  Object.fromEntries(
    (await rows()).map((r) => [r.tx_id, [r.kind, r.status, r.round_status, r.amount_minor, r.attempts]]),
  );
const balances = async () =>
  Object.fromEntries(
    (await e.sql<{ user_id: string; balance: string }[]>`select user_id, balance from wallet_balances`).map(
      (r) => [r.user_id, r.balance],
    ),
  );
/** `ev` with its `at` set to T0 + ms. */
const at = (ev: WalletEvent, ms: number) => ({ ...ev, value: { ...ev.value, at: T0 + ms } }) as WalletEvent;
const settledOf = (bet: BetContext, tx: number, outcome: 'won' | 'lost', payout: number): WalletEvent => ({
  type: 'BetSettled',
  value: {
    tx_id: tx,
    bet,
    outcome,
    payout_minor: payout,
    win_tx_id: outcome === 'won' ? tx + 1 : null,
    at: T0 + 150,
  },
});
const until = (what: string, f: () => Promise<boolean>) =>
  waitFor(what, async () => ((await f()) ? true : undefined), 20_000, 200);

const a = placed(100, 'crash', 1);
const b = placed(104, 'crash', 1);
const c = placed(108, 'crash', 1, { mode: 'free' });
const d = placed(112, 'crash', 1, { demo: true, user_id: 'demo-1' });
const f = placed(116, 'slot', 1);

describe('wallet projector', () => {
  it('given the events of four bets, then these rows and balances', async () => {
    await e.append(a.value.bet, [
      a,
      succeeded(100, 'bet', '90.00'),
      settledOf(a.value.bet, 100, 'won', 2000),
      at(succeeded(100, 'win', '110.00', 2000), 200),
    ]);
    await e.append(b.value.bet, [
      b,
      {
        type: 'CallbackFailed',
        value: {
          tx_id: 104,
          bet_tx_id: 104,
          kind: 'bet',
          attempts: 1,
          error: 'timeout',
          answer: 'failed',
          code: 'TIMEOUT',
          parked: false,
          next_attempt_at: null,
          at: T0 + 10,
        },
      },
      {
        type: 'BetRejected',
        value: { tx_id: 104, code: 'TIMEOUT', reason: 'no answer in 10 s', at: T0 + 11 },
      },
      {
        type: 'RollbackRequested',
        value: { tx_id: 106, linked_tx_id: 104, bet: b.value.bet, reason: 'timeout', at: T0 + 12 },
      },
      succeeded(104, 'rollback', '100.00'),
    ]);
    // A free bet is registered at the operator as a bet that moves no money.
    await e.append(c.value.bet, [
      c,
      succeeded(108, 'bet', '90.00', 0),
      settledOf(c.value.bet, 108, 'lost', 0),
    ]);
    await e.append(d.value.bet, [d, settledOf(d.value.bet, 112, 'won', 2000)]);
    await until('7 rows', async () => (await rows()).length === 7);
    expect(await brief()).toEqual({
      100: ['bet', 'succeeded', 'won', 1000, 1],
      101: ['win', 'succeeded', 'won', 2000, 1],
      104: ['bet', 'rejected', 'cancelled', 1000, 1],
      106: ['rollback', 'succeeded', 'cancelled', 1000, 1],
      108: ['bet', 'succeeded', 'lost', 1000, 1],
      112: ['bet', 'succeeded', 'won', 1000, 0],
      113: ['win', 'succeeded', 'won', 2000, 0],
    });
    const win = (await rows()).find((r) => r.tx_id === 101);
    expect(win).toMatchObject({
      bet_tx_id: 100,
      operator_tx_id: 'op-101',
      new_balance: '110.00',
      demo: false,
    });
    expect((await rows()).find((r) => r.tx_id === 104)?.detail).toBe('TIMEOUT: no answer in 10 s');
    // operator players (the free bet's registration answered a balance too): the last balance
    // answered; demo: 1000.00 - 10.00 + 20.00
    expect(await balances()).toEqual({
      'u-100': '110.00',
      'u-104': '100.00',
      'u-108': '90.00',
      'demo-1': '1010.00',
    });
  });

  it('a win acknowledged before its BetSettled is read is kept and completed', async () => {
    await e.append(f.value.bet, [f, succeeded(116, 'bet', '40.00')]);
    await until('bet row', async () => (await rows()).some((r) => r.tx_id === 116));
    await e.append(f.value.bet, [at(succeeded(116, 'win', '70.00', 3000), 300)]);
    await until('win row', async () => (await rows()).some((r) => r.tx_id === 117));
    expect((await brief())[117]).toEqual(['win', 'succeeded', 'won', 3000, 1]);
    await e.append(f.value.bet, [settledOf(f.value.bet, 116, 'won', 3000)]);
    await until('bet won', async () => (await brief())[116]?.[2] === 'won');
    expect((await brief())[117]).toEqual(['win', 'succeeded', 'won', 3000, 1]);
    expect((await balances())['u-116']).toBe('70.00');
  });

  it('duplicated events and a full replay of the topic change nothing', async () => {
    const before = await rows();
    const balancesBefore = await balances();
    // duplicates, including an older balance answer appended after a newer one
    await e.append(a.value.bet, [
      a,
      succeeded(100, 'bet', '90.00'),
      settledOf(a.value.bet, 100, 'won', 2000),
    ]);
    await e.append(d.value.bet, [d, settledOf(d.value.bet, 112, 'won', 2000)]);
    const marker = placed(120, 'crash', 1, { user_id: 'u-100' });
    await e.append(marker.value.bet, [marker]); // same player and partition as bet 100: read after the duplicates
    await until('marker', async () => (await rows()).some((r) => r.tx_id === 120));
    expect((await rows()).filter((r) => r.tx_id !== 120)).toEqual(before);
    expect(await balances()).toEqual(balancesBefore);

    await p?.stop();
    await e.sql`delete from projection_checkpoints where projection = 'wallet'`;
    const withMarker = await rows();
    await start();
    const total = (await e.readWallet()).length;
    await until('replayed', async () => {
      const [r] = await e.sql<{ n: number }[]>`
        select coalesce(sum("offset"), 0)::int as n from projection_checkpoints where projection = 'wallet'`;
      return r?.n === total;
    });
    expect(await rows()).toEqual(withMarker);
    expect(await balances()).toEqual(balancesBefore);
  });

  it('shows demo balances in the precision of their currency (1000 major units to start)', async () => {
    const jpy = placed(124, 'crash', 1, { demo: true, user_id: 'demo-jpy', currency: 'JPY' });
    const btc = placed(128, 'crash', 1, {
      demo: true,
      user_id: 'demo-btc',
      currency: 'BTC',
      amount_minor: 1,
    });
    await e.append(jpy.value.bet, [jpy, settledOf(jpy.value.bet, 124, 'won', 2500)]);
    await e.append(btc.value.bet, [btc, settledOf(btc.value.bet, 128, 'lost', 0)]);
    await until('demo balances', async () => {
      const b = await balances();
      return b['demo-jpy'] === '2500' && b['demo-btc'] !== undefined;
    });
    // ¥1000 − ¥1000 + ¥2500; 1000 BTC − 1 satoshi.
    expect(await balances()).toMatchObject({
      'demo-jpy': '2500',
      'demo-btc': '999.99999999',
      'demo-1': '1010.00',
    });
  });
});
