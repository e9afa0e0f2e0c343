/**
 * "Done when", against the whole platform as real processes (tests/browser/stack.ts with
 * `wallet: true`): the operator sandbox in strict mode (exact bodies, no win for a bet it did not
 * book, answers with the status in the body; the operator row reads answers with the
 * `status-in-body` preset), on form A and then form B, plays a session of real-money and free bets
 * under injected faults (failing wins, a bet answered 500 after booking, a refused bet). It ends with
 * every bet closed, every win paid once, nothing parked, no rollback after a refusal, and the
 * reconciliation of the sandbox ledger with the read models agreed and settled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackWithWallet, startStack } from './browser/stack.ts';
import { betOnFreshRound, expectSettled, join, rowsOf } from './support/wallet-faults.ts';
import { faultsLeft, ledger, placeBet, setFaults } from './support/wallet-players.ts';

let stack: StackWithWallet;

beforeAll(async () => {
  stack = await startStack({ wallet: true, roundSpeed: 10 });
  await stack.wallet.setOperator({
    retryPolicy: { delaysMs: [100, 200, 400, 800, 800, 800], jitter: 0.2 },
    answerTable: 'status-in-body',
  });
  const mode = await fetch(`${stack.wallet.sandboxUrl}/_sandbox/mode`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ strict: true }),
  });
  expect(await mode.json()).toMatchObject({ strict: true, preset: 'status-in-body' });
}, 180_000);

afterAll(async () => {
  if (stack) await setFaults(stack.wallet.sandboxUrl, []).catch(() => {});
  await stack?.stop();
}, 60_000);

/** Grants `user` free bets on double (POST /games/free-bets with the operator's bearer). */
async function grant(user: string, quantity: number): Promise<void> {
  const res = await fetch(`${stack.base}/games/free-bets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.wallet.apiToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      game_slug: 'double',
      user_id: user,
      quantity,
      value: 5,
      currency: 'USD',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      bonus_code: 'WELCOME',
    }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

describe.each(['A', 'B'] as const)('a strict operator, form %s', (form) => {
  it('real-money and free bets under faults end closed, paid once, nothing parked, no rollback after a refusal', async () => {
    await stack.wallet.setOperator({ form });
    const players = [await join(stack, 'double'), await join(stack, 'double')];
    for (const p of players) await grant(p.user, 2);
    await setFaults(stack.wallet.sandboxUrl, [
      // The first bet is booked, then answered 500: rolled back (the strict operator refunds it).
      { kind: 'bet', mode: 'commit-then-500', count: 1 },
      // Three win or round-close callbacks fail at first: retried on the schedule.
      { kind: 'win', mode: 'error500', count: 3 },
    ]);
    const trios = await betOnFreshRound(stack, players);
    // Free bets, registered at the operator as bets that move no money, then played.
    const free: number[] = [];
    for (const p of players) {
      for (const color of ['red', 'black']) {
        const r = await placeBet(stack.base, p, { free: true, selection: { color } });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        free.push(r.body.tx_id);
      }
    }
    // A refusal: a bet over the balance.
    const broke = await placeBet(stack.base, players[0] as (typeof players)[0], {
      amount: 5000,
      selection: { color: 'red' },
    });
    expect(broke.status).toBe(202);
    const all = [...trios.flatMap((t) => t.txs), ...free, broke.body.tx_id];
    const report = await expectSettled(stack, all, 120_000);
    expect(report.outstanding).toEqual([]);
    expect(await faultsLeft(stack.wallet.sandboxUrl)).toEqual([]); // every fault fired
    await setFaults(stack.wallet.sandboxUrl, []);

    // Nothing parked for ops.
    const parked = await stack.wallet.sql<{ n: string }[]>`
      select count(*)::text as n from wallet_callbacks where status = 'parked'`;
    expect(Number(parked[0]?.n)).toBe(0);
    const rows = await rowsOf(
      stack,
      players.map((p) => p.user),
    );
    // The faults met real callbacks: a bet booked then answered 500 was rolled back, and three
    // wins or closes were tried more than once.
    expect(rows.filter((r) => r.kind === 'rollback' && r.status === 'succeeded')).toHaveLength(1);
    expect(
      rows.filter((r) => (r.kind === 'win' || r.kind === 'close') && r.attempts > 1).length,
    ).toBeGreaterThanOrEqual(1);
    // The refused bet: rejected, and no rollback.
    const refused = rows.find((r) => r.tx_id === broke.body.tx_id);
    expect(refused).toMatchObject({ kind: 'bet', status: 'rejected' });
    expect(refused?.detail).toMatch(/^INSUFFICIENT_FUNDS/);
    expect(rows.some((r) => r.kind === 'rollback' && r.bet_tx_id === broke.body.tx_id)).toBe(false);
    // Every free bet registered at the operator as a bet that moved nothing, and closed.
    for (const tx of free) {
      const bet = rows.find((r) => r.tx_id === tx);
      expect(bet?.status, `free bet ${tx}`).toBe('succeeded');
      expect(['won', 'lost']).toContain(bet?.round_status);
    }
    // Every win paid once, and only on a bet the operator booked.
    for (const p of players) {
      const l = await ledger(stack.wallet.sandboxUrl, p.user);
      const ids = l.body.transactions.map((t) => `${t.kind}:${t.provider_tx_id}`);
      expect(new Set(ids).size).toBe(ids.length);
      const booked = new Set(
        l.body.transactions.filter((t) => t.kind === 'bet').map((t) => Number(t.provider_tx_id)),
      );
      for (const t of l.body.transactions.filter((x) => x.kind === 'win'))
        expect(booked.has(Number(t.provider_tx_id) - 1), `win ${t.provider_tx_id} on a booked bet`).toBe(
          true,
        );
      for (const tx of free.filter((id) => rows.find((r) => r.tx_id === id)?.user_id === p.user))
        expect(
          l.body.transactions.find((t) => t.kind === 'bet' && Number(t.provider_tx_id) === tx)?.delta_minor,
        ).toBe(0);
      const credits = rows.filter(
        (r) =>
          r.kind === 'win' &&
          r.status === 'succeeded' &&
          rows.find((b) => b.tx_id === r.bet_tx_id)?.user_id === p.user,
      );
      expect(l.body.transactions.filter((t) => t.kind === 'win' && t.delta_minor > 0)).toHaveLength(
        credits.length,
      );
    }
  }, 240_000);
});
