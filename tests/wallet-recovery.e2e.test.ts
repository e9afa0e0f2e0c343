/**
 * A player's win after a short outage of the operator's win path (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward), as it was found: the whole platform as real processes
 * (tests/browser/stack.ts with `wallet: true`), players on the real path, the operator sandbox
 * answering 500 on its win path (PUT /_sandbox/faults, kind `win`: wins and zero-amount round
 * closes) while bets keep succeeding, then recovering. The wins and closes that failed their first
 * retry inside the outage must be credited within seconds of the operator's first success on that
 * path, not at the schedule's next step.
 *
 * The operator's schedule is shortened the way the other wallet e2e tests shorten it: a 500 ms first
 * retry and a 90 s second step (the published default's are 5 s and 5 min), no jitter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackWithWallet, startStack } from './browser/stack.ts';
import { waitFor } from './support/poll.ts';
import { betOnFreshRound, expectSettled, join, rowsOf } from './support/wallet-faults.ts';
import { ledger, setFaults } from './support/wallet-players.ts';

let stack: StackWithWallet;
/** The schedule's second step, ms: what a pending win waited for before pulling forward. */
const SECOND_STEP_MS = 90_000;

beforeAll(async () => {
  stack = await startStack({ wallet: true, roundSpeed: 10 });
  await stack.wallet.setOperator({ retryPolicy: { delaysMs: [500, SECOND_STEP_MS], jitter: 0 } });
}, 180_000);

afterAll(async () => {
  if (stack) await setFaults(stack.wallet.sandboxUrl, []).catch(() => {});
  await stack?.stop();
}, 60_000);

interface CallbackRow {
  tx_id: number;
  kind: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  updated_at: number;
}

/** The wallet_callbacks rows of the wins and round closes of `bets` (bet + 1). */
async function paysOf(bets: readonly number[]): Promise<CallbackRow[]> {
  const { sql } = stack.wallet;
  const rows = await sql<Record<string, string>[]>`
    select tx_id::text, kind, status, attempts::text, next_attempt_at::text, updated_at::text
    from wallet_callbacks where tx_id in ${sql(bets.map((b) => b + 1))} order by tx_id`;
  return rows.map((r) => ({
    tx_id: Number(r.tx_id),
    kind: String(r.kind),
    status: String(r.status),
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    updated_at: Number(r.updated_at),
  }));
}

describe('wins waiting for a retry when the operator is back', () => {
  it('are credited within seconds of the win path answering again, not at the next step', async () => {
    const w = stack.wallet;
    const [a, b, c] = [await join(stack, 'double'), await join(stack, 'double'), await join(stack, 'double')];
    // The win path answers 500 until told otherwise; the bet path is untouched.
    await setFaults(w.sandboxUrl, [{ kind: 'win', mode: 'error500' }]);
    const during = await betOnFreshRound(stack, [a, b]);
    const pending = during.flatMap((p) => p.txs);
    // Every debit of the outage succeeds; every win and close fails its first try and its 500 ms
    // retry and waits for the second step.
    const waiting = await waitFor(
      'the wins and closes of the outage waiting for the second step',
      async () => {
        const rows = await paysOf(pending);
        return rows.length === pending.length && rows.every((r) => r.status === 'due' && r.attempts === 2)
          ? rows
          : undefined;
      },
      30_000,
      100,
    );
    const betRows = (await rowsOf(stack, [a.user, b.user])).filter((r) => r.kind === 'bet');
    expect(betRows.map((r) => r.status)).toEqual(pending.map(() => 'succeeded'));
    // Each waits the 90 s step from its second failure (stored a few ms after it was timed).
    for (const r of waiting) expect(r.next_attempt_at - r.updated_at).toBeGreaterThan(SECOND_STEP_MS - 1_000);

    // The win path recovers; bets go on: the next round's wins and closes are its first successes.
    await setFaults(w.sandboxUrl, []);
    const [after] = await betOnFreshRound(stack, [c]);
    const fresh = after?.txs ?? [];
    const firstSuccess = await waitFor(
      'a win or close of the round after the outage credited',
      async () => {
        const done = (await paysOf(fresh)).filter((r) => r.status === 'done');
        return done.length > 0 ? Math.min(...done.map((r) => r.updated_at)) : undefined;
      },
      30_000,
      100,
    );
    // Within seconds of that success; the schedule alone would wait out the 90 s step.
    let last: CallbackRow[] = [];
    try {
      await waitFor(
        'the wins and closes of the outage credited',
        async () => {
          last = await paysOf(pending);
          return last.every((r) => r.status === 'done') ? true : undefined;
        },
        30_000,
        100,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(last)} (first success ${firstSuccess})`);
    }
    const credited = last.map((r) => r.updated_at - firstSuccess);
    expect(Math.max(...credited)).toBeLessThan(10_000);
    // Each was sent once more: one attempt beyond the two failures.
    expect(last.map((r) => r.attempts)).toEqual(pending.map(() => 3));

    // Nothing paid twice: reconciled, and each player's ledger holds one win movement per bet.
    await expectSettled(stack, [...pending, ...fresh]);
    for (const p of [a, b, c]) {
      const l = await ledger(w.sandboxUrl, p.user);
      const wins = l.body.transactions.filter((t) => t.kind === 'win').map((t) => t.provider_tx_id);
      expect(wins).toHaveLength(3);
      expect(new Set(wins).size).toBe(3);
    }
  });
});
