/**
 * against the whole platform as real processes (tests/browser/
 * stack.ts with `wallet: true`: round engine, projector, API, edges, gateway, operator sandbox,
 * settlement, wallet saga). Players take the real path (request-access with the operator bearer,
 * the game URL's launch code through POST /play/open, POST /play/bets through the gateway); the
 * sandbox injects each fault (PUT /_sandbox/faults); each scenario ends with the reconciliation
 * (services/operator-sandbox/reconcile.ts) agreed AND settled, plus its own checks of the read
 * models (wallet_transactions, wallet_balances) and the sandbox ledger.
 *
 * Scenarios run one after the other: fault rules are global to the sandbox and `settled` covers
 * every row of the operator. Rounds are fast (ROUND_SPEED 10: a double round lasts 1.5 s) and the
 * operator's retry policy short (retries within about a second), so the file takes a few minutes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type StackWithWallet, startStack } from './browser/stack.ts';
import { waitFor } from './support/poll.ts';
import { waitReady } from './support/processes.ts';
import {
  balanceRow,
  betOnFreshRound,
  expectSettled,
  join,
  rowsOf,
  STAKE,
  TRIO_COLORS,
  trio,
} from './support/wallet-faults.ts';
import { faultsLeft, ledger, type Player, placeBet, setFaults } from './support/wallet-players.ts';

let stack: StackWithWallet;

beforeAll(async () => {
  stack = await startStack({ wallet: true, roundSpeed: 10 });
  // Short backoff so transient win failures are retried within about a second (published default: minutes).
  await stack.wallet.setOperator({
    retryPolicy: { retries: 8, minTimeoutMs: 100, maxTimeoutMs: 800, factor: 2 },
  });
}, 180_000);

afterEach(async () => {
  if (stack) await setFaults(stack.wallet.sandboxUrl, []);
});

afterAll(async () => {
  await stack?.stop();
}, 60_000);

const w = () => stack.wallet;
const START = '1000.00';
const START_MINOR = 100_000;

describe('a bet the operator does not confirm is rejected and compensated, nothing moves', () => {
  it.each([
    {
      name: 'answers 500',
      rule: { kind: 'bet', mode: 'error500', count: 1 } as const,
      code: 'OPERATOR_ERROR',
    },
    {
      name: 'never answers (timeout)',
      rule: { kind: 'bet', mode: 'timeout', latencyMs: 5000, count: 1 } as const,
      code: 'TIMEOUT',
    },
  ])('operator $name on a bet', async ({ rule, code }) => {
    const p = await join(stack, 'double');
    if (rule.mode === 'timeout') await w().setOperator({ timeoutMs: 300 });
    try {
      await setFaults(w().sandboxUrl, [rule]);
      const bet = await placeBet(stack.base, p, { amount: STAKE, selection: { color: 'red' } });
      expect(bet.status).toBe(202);
      const tx = bet.body.tx_id;
      await expectSettled(stack, [tx]);
      expect(await faultsLeft(w().sandboxUrl)).toEqual([]); // the fault fired
      const rows = await rowsOf(stack, p.user);
      expect(rows.map((r) => [r.tx_id, r.kind, r.status, r.round_status])).toEqual([
        [tx, 'bet', 'rejected', 'cancelled'],
        [tx + 2, 'rollback', 'succeeded', 'cancelled'],
      ]);
      expect(rows[0]?.detail).toMatch(new RegExp(`^${code}`));
      // The rollback of a bet the operator never booked is acknowledged and moves nothing.
      const l = await ledger(w().sandboxUrl, p.user);
      expect(l.body.balance).toBe(START);
      expect(l.body.transactions.map((t) => [t.kind, t.provider_tx_id, t.delta_minor])).toEqual([
        ['rollback', String(tx + 2), 0],
      ]);
      expect(await balanceRow(stack, p.user)).toBe(START);
    } finally {
      if (rule.mode === 'timeout') await w().setOperator({ timeoutMs: 10_000 });
    }
  });

  it('operator answering late, after the saga gave up: debited and refunded, or refused; never kept', async () => {
    const p = await join(stack, 'double');
    await w().setOperator({ timeoutMs: 300 });
    try {
      // latency holds the request until the saga hangs up, then books the bet: the commit comes late.
      await setFaults(w().sandboxUrl, [{ kind: 'bet', mode: 'latency', latencyMs: 1500, count: 1 }]);
      const bet = await placeBet(stack.base, p, { amount: STAKE, selection: { color: 'black' } });
      expect(bet.status).toBe(202);
      const tx = bet.body.tx_id;
      await expectSettled(stack, [tx]);
      const rows = await rowsOf(stack, p.user);
      expect(rows.find((r) => r.tx_id === tx)).toMatchObject({
        status: 'rejected',
        round_status: 'cancelled',
      });
      expect(rows.find((r) => r.tx_id === tx + 2)).toMatchObject({ kind: 'rollback', status: 'succeeded' });
      const l = await ledger(w().sandboxUrl, p.user);
      expect(l.body.balance).toBe(START);
      expect(l.body.transactions.reduce((s, t) => s + t.delta_minor, 0)).toBe(0);
      expect(l.body.transactions.filter((t) => t.kind === 'rollback')).toHaveLength(1);
      expect(l.body.transactions.filter((t) => t.kind === 'bet').length).toBeLessThanOrEqual(1);
    } finally {
      await w().setOperator({ timeoutMs: 10_000 });
    }
  });
});

describe('the operator commits and the answer is lost or broken', () => {
  it.each([{ mode: 'commit-then-500' }, { mode: 'commit-then-drop' }, { mode: 'malformed' }] as const)(
    'bet, $mode: debited then refunded exactly once',
    async ({ mode }) => {
      const p = await join(stack, 'double');
      await setFaults(w().sandboxUrl, [{ kind: 'bet', mode, count: 1 }]);
      const bet = await placeBet(stack.base, p, { amount: STAKE, selection: { color: 'red' } });
      expect(bet.status).toBe(202);
      const tx = bet.body.tx_id;
      await expectSettled(stack, [tx]);
      const rows = await rowsOf(stack, p.user);
      expect(rows.map((r) => [r.tx_id, r.kind, r.status, r.round_status])).toEqual([
        [tx, 'bet', 'rejected', 'cancelled'],
        [tx + 2, 'rollback', 'succeeded', 'cancelled'],
      ]);
      expect(rows[0]?.detail).toMatch(/^OPERATOR_ERROR/);
      const l = await ledger(w().sandboxUrl, p.user);
      expect(l.body.transactions.map((t) => [t.kind, t.provider_tx_id, t.delta_minor])).toEqual([
        ['bet', String(tx), -STAKE * 100],
        ['rollback', String(tx + 2), STAKE * 100],
      ]);
      expect(l.body.balance).toBe(START);
      expect(await balanceRow(stack, p.user)).toBe(START);
    },
  );

  it.each([{ mode: 'commit-then-500' }, { mode: 'commit-then-drop' }, { mode: 'malformed' }] as const)(
    'win, $mode: retried and credited once',
    async ({ mode }) => {
      const p = await join(stack, 'double');
      // The fault must meet the win itself, not a lost bet's zero-amount round close (also a win).
      await w().setOperator({ roundClose: 'none' });
      try {
        await setFaults(w().sandboxUrl, [{ kind: 'win', mode, count: 1 }]);
        const win = await trio(stack, p, false);
        expect(await faultsLeft(w().sandboxUrl)).toEqual([]);
        expect(win.attempts).toBe(2);
      } finally {
        await w().setOperator({ roundClose: 'zero-win' });
      }
    },
  );

  it('win callbacks failing transiently are retried with backoff until acknowledged, credited once', async () => {
    const p = await join(stack, 'double');
    await w().setOperator({ roundClose: 'none' });
    try {
      await setFaults(w().sandboxUrl, [{ kind: 'win', mode: 'error500', count: 3 }]);
      const win = await trio(stack, p, false);
      expect(await faultsLeft(w().sandboxUrl)).toEqual([]);
      expect(win.attempts).toBe(4);
    } finally {
      await w().setOperator({ roundClose: 'zero-win' });
    }
  });
});

describe('bets the platform or the operator refuses up front', () => {
  it('a bet over the balance: the operator refuses with 402, the bet is rejected, nothing else changes', async () => {
    const p = await join(stack, 'double');
    const bet = await placeBet(stack.base, p, { amount: 5000, selection: { color: 'red' } });
    expect(bet.status).toBe(202);
    const tx = bet.body.tx_id;
    await expectSettled(stack, [tx]);
    const rows = await rowsOf(stack, p.user);
    expect(rows.map((r) => [r.tx_id, r.kind, r.status, r.round_status])).toEqual([
      [tx, 'bet', 'rejected', 'cancelled'],
    ]);
    expect(rows[0]?.detail).toMatch(/^INSUFFICIENT_FUNDS/);
    const l = await ledger(w().sandboxUrl, p.user);
    expect(l.body).toMatchObject({ balance: START, balance_minor: START_MINOR, transactions: [] });
    expect(await balanceRow(stack, p.user)).toBeUndefined(); // no operator answer moved it
  });

  it('a bet on a round that already finished: 409 from the API and nothing appended', async () => {
    const p = await join(stack, 'double');
    const [g] = await w().sql<{ last_round: string }[]>`select last_round from games where slug = 'double'`;
    const before = await w().walletEnd();
    const res = await placeBet(stack.base, p, {
      amount: STAKE,
      round_id: String(g?.last_round),
      selection: { color: 'red' },
    });
    expect(res.status).toBe(409);
    expect(res.contentType).toMatch(/^application\/problem\+json/);
    // betting on that round closed with its BettingClosed.
    expect(res.body).toMatchObject({ code: 'BETTING_CLOSED' });
    expect(await w().walletEnd()).toBe(before);
    expect(await rowsOf(stack, p.user)).toEqual([]);
    const l = await ledger(w().sandboxUrl, p.user);
    expect(l.body).toMatchObject({ balance: START, transactions: [] });
    expect((await w().reconcile()).settled).toBe(true);
  });
});

describe('processes killed with SIGKILL mid-flight and restarted', () => {
  it('wallet saga: no bet debited twice, no win credited twice', async () => {
    const players: Player[] = [];
    for (let i = 0; i < 3; i++) players.push(await join(stack, 'double'));
    // Slow callbacks keep work in flight when the kill comes.
    await setFaults(w().sandboxUrl, [
      { kind: 'bet', mode: 'latency', latencyMs: 300 },
      { kind: 'win', mode: 'latency', latencyMs: 300 },
    ]);
    const placed = await betOnFreshRound(stack, players);
    const txs = placed.flatMap((b) => b.txs);
    const confirmed = async () =>
      Number(
        (
          await w().sql<{ n: string }[]>`select count(*) as n from wallet_transactions
                                         where tx_id in ${w().sql(txs)} and status = 'succeeded'`
        )[0]?.n,
      );
    await waitFor(
      'a first debit confirmed',
      async () => ((await confirmed()) >= 1 ? true : undefined),
      30_000,
      20,
    );
    expect(await stack.services.saga?.stop('SIGKILL')).toBe('SIGKILL');
    const atKill = await confirmed();
    expect(atKill).toBeLessThan(txs.length);
    stack.startOne('saga');
    const restarted = Date.now();
    await waitReady(w().readyUrls.saga);
    await expectSettled(stack, txs, 120_000);
    console.log(
      `saga kill: ${atKill}/${txs.length} debits confirmed at the kill; settled ${Date.now() - restarted} ms after the restart`,
    );
    await checkTrios(placed);
  }, 180_000);

  it('settlement: every bet settled exactly once, wins credited once', async () => {
    const players: Player[] = [];
    for (let i = 0; i < 2; i++) players.push(await join(stack, 'double'));
    const placed = await betOnFreshRound(stack, players);
    const txs = placed.flatMap((b) => b.txs);
    await waitFor(
      'the debits confirmed',
      async () =>
        (
          await rowsOf(
            stack,
            players.map((p) => p.user),
          )
        ).filter((r) => r.kind === 'bet' && r.status === 'succeeded').length === txs.length
          ? true
          : undefined,
      30_000,
      20,
    );
    // The bets' round is still running: settlement dies holding them, and rounds finish meanwhile.
    expect(await stack.services.settlement?.stop('SIGKILL')).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    stack.startOne('settlement');
    await waitReady(w().readyUrls.settlement);
    await expectSettled(stack, txs, 120_000);
    await checkTrios(placed);
    const settledEvents = (await w().walletEvents()).filter(
      (e) => e.event.type === 'BetSettled' && txs.includes(e.event.value.tx_id),
    );
    expect(settledEvents.map((e) => (e.event.value as { tx_id: number }).tx_id).sort()).toEqual(
      [...txs].sort(),
    );
  }, 180_000);
});

/** Every player of a killed-process scenario: three debits, one win of the right size, once. */
async function checkTrios(placed: Awaited<ReturnType<typeof betOnFreshRound>>): Promise<void> {
  for (const b of placed) {
    const rows = await rowsOf(stack, b.player.user);
    const bets = rows.filter((r) => r.kind === 'bet');
    expect(bets.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const won = bets.filter((r) => r.round_status === 'won');
    expect(won).toHaveLength(1);
    const color = TRIO_COLORS[b.txs.indexOf(won[0]?.tx_id as number)];
    const payout = STAKE * 100 * (color === 'white' ? 14 : 2);
    const l = await ledger(w().sandboxUrl, b.player.user);
    expect(l.body.transactions.filter((t) => t.kind === 'bet')).toHaveLength(3);
    // The win, and the two lost bets' zero-amount round closes.
    expect(
      l.body.transactions
        .filter((t) => t.kind === 'win')
        .map((t) => t.delta_minor)
        .sort((x, y) => x - y),
    ).toEqual([0, 0, payout]);
    expect(l.body.balance_minor).toBe(START_MINOR - 3 * STAKE * 100 + payout);
  }
}
