/**
 * Support of tests/wallet-faults.e2e.test.ts and tests/wallet-main-job.e2e.test.ts (not a test
 * file): players joining through the real path, bets that are sure to produce one win (a "trio":
 * red, black and white on one double round, exactly one of which wins), reads of the read models,
 * and the wait for the reconciliation.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ReconcileReport } from '../../services/operator-sandbox/reconcile.ts';
import type { StackWithWallet } from '../browser/stack.ts';
import { waitFor } from './poll.ts';
import { ledger, newPlayer, type Player, placeBet, playerBalance } from './wallet-players.ts';

/** Stake of every bet of the scenarios, major units. */
export const STAKE = 10;
/** The trio's colours, in the order of its tx ids. */
export const TRIO_COLORS = ['red', 'black', 'white'] as const;
/**
 * Betting window left (ms) for a trio to be placed in it: the double's is 1 s at ROUND_SPEED 10, so
 * the trios go out at the start of a window (the API refuses bets 100 ms before its close; nine bets
 * at once through the gateway can take several hundred ms on a loaded machine).
 */
const MIN_WINDOW_MS = 700;

/** A wallet_transactions row with numbers for ids and amounts. */
export interface TxRow {
  tx_id: number;
  bet_tx_id: number;
  kind: 'bet' | 'win' | 'rollback' | 'close';
  status: string;
  round_status: string;
  amount_minor: number;
  attempts: number;
  detail: string | null;
  new_balance: string | null;
  user_id: string;
}

/** A new real-money player of `game` who opened the game URL and sees the operator's balance. */
export async function join(stack: StackWithWallet, game: string): Promise<Player> {
  const p = await newPlayer(stack.base, stack.wallet.apiToken, `p-${randomBytes(4).toString('hex')}`, game, {
    currency: 'USD',
  });
  const b = await playerBalance(stack.base, p);
  expect(b).toMatchObject({ status: 200, body: { balance: '1000.00', currency: 'USD', demo: false } });
  return p;
}

/** The wallet_transactions rows of one or more players, by tx_id. */
export async function rowsOf(stack: StackWithWallet, users: string | readonly string[]): Promise<TxRow[]> {
  const list = typeof users === 'string' ? [users] : [...users];
  const { sql } = stack.wallet;
  const rows = await sql<Record<string, unknown>[]>`
    select tx_id, bet_tx_id, kind, status, round_status, amount_minor, attempts, detail, new_balance, user_id
    from wallet_transactions where user_id in ${sql(list)} order by tx_id`;
  return rows.map((r) => ({
    ...(r as unknown as TxRow),
    tx_id: Number(r.tx_id),
    bet_tx_id: Number(r.bet_tx_id),
    amount_minor: Number(r.amount_minor),
    attempts: Number(r.attempts),
  }));
}

/** The player's balance in wallet_balances (the operator's last answer), or undefined. */
export async function balanceRow(stack: StackWithWallet, user: string): Promise<string | undefined> {
  const [row] = await stack.wallet.sql<{ balance: string }[]>`
    select balance from wallet_balances where operator_id = ${stack.wallet.operatorId} and user_id = ${user}`;
  return row?.balance;
}

/**
 * Waits until every bet of `betTxIds` (none: no such wait) is in the read model and the
 * reconciliation is settled, then asserts it agreed and settled.
 * @throws (assertion) with the last report and the services' logs when it does not settle in time.
 */
export async function expectSettled(
  stack: StackWithWallet,
  betTxIds: readonly number[],
  timeoutMs = 60_000,
): Promise<ReconcileReport> {
  const { sql } = stack.wallet;
  let last: ReconcileReport | undefined;
  try {
    await waitFor(
      `bets ${betTxIds.join(',')} reconciled and settled`,
      async () => {
        if (betTxIds.length > 0) {
          const [n] = await sql<{ n: string }[]>`
            select count(*) as n from wallet_transactions where kind = 'bet' and tx_id in ${sql([...betTxIds])}`;
          if (Number(n?.n) !== betTxIds.length) return undefined;
        }
        last = await stack.wallet.reconcile();
        return last.settled ? last : undefined;
      },
      timeoutMs,
      200,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\nlast report: ${JSON.stringify(last)}\n${stack.logs()}`);
  }
  expect(last).toMatchObject({
    agreed: true,
    settled: true,
    mismatches: [],
    unknown: [],
    broken_accounts: [],
  });
  return last as ReconcileReport;
}

/**
 * Waits for a double round whose betting window has just opened (GET /api/rounds/current/double,
 * at least MIN_WINDOW_MS of it left), then every player bets a trio (red, black, white, STAKE each)
 * on it at once, so all of a trio's bets meet the same result.
 * @returns per player the tx ids in TRIO_COLORS order and the round.
 */
export async function betOnFreshRound(
  stack: StackWithWallet,
  players: readonly Player[],
): Promise<{ player: Player; txs: number[]; round: number }[]> {
  const current = async () => {
    const res = await fetch(`${stack.base}/api/rounds/current/double`);
    return (await res.json()) as { round_id: number | null; phase: string; betting_closes_at: string | null };
  };
  const round = await waitFor(
    'a double round taking bets',
    async () => {
      const c = await current();
      const left = c.betting_closes_at ? Date.parse(c.betting_closes_at) - Date.now() : 0;
      return c.phase === 'betting' && left >= MIN_WINDOW_MS ? (c.round_id as number) : undefined;
    },
    60_000,
    25,
  );
  return Promise.all(
    players.map(async (player) => {
      const replies = await Promise.all(
        TRIO_COLORS.map((color) =>
          placeBet(stack.base, player, { amount: STAKE, round_id: String(round), selection: { color } }),
        ),
      );
      for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(202);
      return { player, txs: replies.map((r) => r.body.tx_id), round };
    }),
  );
}

/**
 * One player's trio, settled: three debits, exactly one win of the right payout credited once, the
 * two lost bets' rounds closed with zero-amount wins (`closes`: the operator's round_close is
 * zero-win), the ledger, wallet_balances and the reconciliation in agreement.
 * @returns the win's row.
 */
export async function trio(stack: StackWithWallet, p: Player, closes = true): Promise<TxRow> {
  const [placed] = await betOnFreshRound(stack, [p]);
  const txs = placed?.txs ?? [];
  await expectSettled(stack, txs);
  const rows = await rowsOf(stack, p.user);
  const bets = rows.filter((r) => r.kind === 'bet');
  expect(bets.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  const won = bets.filter((r) => r.round_status === 'won');
  expect(won).toHaveLength(1);
  const color = TRIO_COLORS[txs.indexOf(won[0]?.tx_id as number)];
  const [round] = await stack.wallet.sql<{ value: string }[]>`
    select value from rounds where game_slug = 'double' and round_id = ${placed?.round ?? 0}`;
  expect(round?.value).toBe(color);
  const payout = STAKE * 100 * (color === 'white' ? 14 : 2);
  const wins = rows.filter((r) => r.kind === 'win');
  expect(wins).toMatchObject([
    { tx_id: (won[0]?.tx_id as number) + 1, status: 'succeeded', amount_minor: payout },
  ]);
  // The two lost bets closed their round at the operator with a zero-amount win,
  // unless the operator closes no rounds.
  const lost = closes ? bets.filter((r) => r.round_status === 'lost').map((r) => r.tx_id + 1) : [];
  expect(rows.filter((r) => r.kind === 'close').map((r) => [r.tx_id, r.status, r.amount_minor])).toEqual(
    lost.map((id) => [id, 'succeeded', 0]),
  );
  const l = await ledger(stack.wallet.sandboxUrl, p.user);
  expect(l.body.transactions.filter((t) => t.kind === 'bet').map((t) => t.delta_minor)).toEqual([
    -STAKE * 100,
    -STAKE * 100,
    -STAKE * 100,
  ]);
  expect(
    l.body.transactions
      .filter((t) => t.kind === 'win')
      .map((t) => t.delta_minor)
      .sort((a, b) => a - b),
  ).toEqual(closes ? [0, 0, payout] : [payout]);
  expect(l.body.transactions.filter((t) => t.kind === 'rollback')).toEqual([]);
  expect(l.body.balance_minor).toBe(100_000 - 3 * STAKE * 100 + payout);
  expect(await balanceRow(stack, p.user)).toBe(l.body.balance);
  return wins[0] as TxRow;
}
