/**
 * faults on the real saga, broker and Postgres against a real HTTP operator
 * (tests/support/wallet-saga.ts), with an injected clock:
 * - a win retried on the published schedule (5 s, 5 min, 30 min, 2 h, …) across a restart of the
 *   saga hours into it: the schedule resumes from Postgres where it was, the win is credited once;
 * - a player's win in retry never holds back that player's next debit;
 * - an operator that goes down trips its circuit breaker; half-open balance probes keep it open
 *   while it is down and close it once it answers.
 * Each ends reconciled (tests/support/wallet-reconcile.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBreaker } from '../../lib/db/operator-breakers.ts';
import { getCallback } from '../../lib/db/wallet-callbacks.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../../rules/retry/schedule.ts';
import { refusesBets } from '../../rules/wallet/breaker.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import { reconcileSaga } from '../support/wallet-reconcile.ts';
import {
  betPlaced,
  betWon,
  eventsOf,
  type SagaEnv,
  sagaOver,
  startedSaga,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from '../support/wallet-saga.ts';

const START = 100_000;
const MIN = 60_000;
const H = 60 * MIN;

let op: TestOperator;
let env: SagaEnv;
/** The clock every saga of this file reads: real time plus `skew`. */
let skew = 0;
const clock = () => Date.now() + skew;

function saga(breaker?: { failures: number; cooldownMs: number; maxCooldownMs: number }): WalletSaga {
  // No jitter: each wait is exactly the schedule's.
  return sagaOver(env, {
    walletSaga: { pollMs: 50, ...(breaker ? { breaker } : {}) },
    now: clock,
    random: () => 0,
  });
}
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 20_000) =>
  waitFor(what, check, ms, 25);
const failures = (tx: number) =>
  eventsOf(env.events, 'CallbackFailed', tx).map(
    (e) => e.value as { attempts: number; next_attempt_at: number | null },
  );

beforeAll(async () => {
  op = await startTestOperator(START);
  // The operator's row keeps the published default schedule.
  env = await startSagaEnv(op, { timeoutMs: 1000, retryPolicy: { ...DEFAULT_RETRY_SCHEDULE } });
}, 60_000);
afterAll(async () => {
  await env?.close();
  await op?.close();
});

describe('a win retried for hours, across a restart', () => {
  it('follows 5 s, 5 min, 30 min, 2 h from Postgres after the restart, and is credited once', async () => {
    let s1: WalletSaga | undefined = await startedSaga(saga());
    const bet = await env.session('patient');
    const tx = 40_000;
    let down = true;
    op.fault('patient', 'win', () => (down ? 'error500' : 'none'));
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('debit', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
    await env.append(bet, [betWon(bet, tx, 5000)]);

    // Attempt 1 fails at once; the next is 5 s later by the saga's clock.
    await until('attempt 1', () => (failures(tx + 1).length === 1 ? true : undefined));
    const a1 = failures(tx + 1)[0];
    expect(a1).toMatchObject({ attempts: 1 });
    skew += 5_000;
    await until('attempt 2', () => (failures(tx + 1).length === 2 ? true : undefined));
    skew += 5 * MIN;
    await until('attempt 3', () => (failures(tx + 1).length === 3 ? true : undefined));
    const [f1, f2, f3] = failures(tx + 1);
    // Each failure names the next attempt: exactly the schedule's wait after it (no jitter here).
    expect((f2?.next_attempt_at ?? 0) - (f1?.next_attempt_at ?? 0)).toBeGreaterThanOrEqual(5 * MIN);
    expect((f3?.next_attempt_at ?? 0) - (f2?.next_attempt_at ?? 0)).toBeGreaterThanOrEqual(30 * MIN);

    // Restart: the schedule lives in Postgres, not in the process.
    await s1.stop();
    s1 = undefined;
    expect(await getCallback(env.sql, tx + 1)).toMatchObject({ status: 'due', attempts: 3 });
    const s2 = saga();
    await s2.start();
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(failures(tx + 1)).toHaveLength(3); // not due yet: nothing sent on restart
      skew += 30 * MIN;
      await until('attempt 4', () => (failures(tx + 1).length === 4 ? true : undefined));
      expect(failures(tx + 1)[3]).toMatchObject({ attempts: 4 });
      down = false;
      skew += 2 * H; // hours into the schedule
      const ok = await until('credited', () => eventsOf(env.events, 'CallbackSucceeded', tx + 1)[0]);
      expect(ok.value).toMatchObject({ kind: 'win', attempts: 5 });
      const wins = op.requests.filter((q) => q.kind === 'win' && Number(q.body.provider_tx_id) === tx + 1);
      expect(wins).toHaveLength(5);
      expect(new Set(wins.map((q) => q.headers['webhook-id']))).toEqual(new Set([`win-${tx + 1}`]));
      expect(op.movements.filter((m) => m.txId === String(tx + 1))).toHaveLength(1);
      expect(op.balance('patient')).toBe(START - 1000 + 5000);
      expect(reconcileSaga(env.events, op, START)).toEqual([]);
    } finally {
      await s2.stop();
    }
  });
});

describe('a pending credit never holds back the next debit', () => {
  it("debits a player's next bet at once while that player's win waits in retry", async () => {
    const s = saga();
    await s.start();
    try {
      await until('saga ready', () => (s.ready() ? true : undefined));
      const bet = await env.session('busy');
      op.fault('busy', 'win', () => 'error500');
      await env.append(bet, [betPlaced(bet, 40_100)]);
      await until('debit 1', () =>
        eventsOf(env.events, 'CallbackSucceeded', 40_100).length ? true : undefined,
      );
      await env.append(bet, [betWon(bet, 40_100, 2000)]);
      await until('win in retry', () => (failures(40_101).length >= 1 ? true : undefined));
      const t0 = Date.now();
      await env.append(bet, [betPlaced(bet, 40_104)]);
      await until('debit 2', () =>
        eventsOf(env.events, 'CallbackSucceeded', 40_104).length ? true : undefined,
      );
      // Debited before the win's first retry came due (5 s; random is 0 here): nothing waited for it.
      expect(failures(40_101)).toHaveLength(1);
      expect(Date.now() - t0).toBeLessThan(4_000);
      expect(await getCallback(env.sql, 40_101)).toMatchObject({ status: 'due' });
    } finally {
      await s.stop();
    }
  });
});

describe('circuit breaker', () => {
  it('does not open on failures spread among successes (5% of 120 debits failing, threshold 5)', async () => {
    const cfg = { failures: 5, cooldownMs: 1_000, maxCooldownMs: 2_000 };
    const s = saga(cfg);
    await s.start();
    try {
      await until('saga ready', () => (s.ready() ? true : undefined));
      const txs: number[] = [];
      for (let i = 0; i < 120; i++) {
        const user = `spread-${i}`;
        if (i % 20 === 7) op.fault(user, 'bet', () => 'error500');
        const bet = await env.session(user);
        const tx = 41_000 + 4 * i;
        txs.push(tx);
        await env.append(bet, [betPlaced(bet, tx)]);
      }
      await until(
        'every debit answered',
        () =>
          txs.every(
            (tx) =>
              eventsOf(env.events, 'CallbackSucceeded', tx).length ||
              eventsOf(env.events, 'BetRejected', tx).length,
          )
            ? true
            : undefined,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 500)); // the breaker's updates are not awaited by the attempts
      const b = await readBreaker(env.sql, env.operatorId);
      expect(b.state).toBe('closed');
      expect(b.failures).toBeLessThan(5);
    } finally {
      await s.stop();
    }
  });

  it('opens after consecutive failed debits, stays open while probes fail, closes when the wallet answers', async () => {
    const cfg = { failures: 3, cooldownMs: 1_000, maxCooldownMs: 2_000 };
    const s = saga(cfg);
    await s.start();
    try {
      await until('saga ready', () => (s.ready() ? true : undefined));
      const users = ['b1', 'b2', 'b3'];
      let down = true;
      for (const u of users) {
        op.fault(u, 'bet', () => (down ? 'error500' : 'none'));
        op.fault(u, 'balance', () => (down ? 'error500' : 'none'));
      }
      for (const [i, u] of users.entries()) {
        const bet = await env.session(u);
        await env.append(bet, [betPlaced(bet, 40_200 + 4 * i)]);
      }
      const open = await until('breaker open', async () => {
        const b = await readBreaker(env.sql, env.operatorId);
        return b.state === 'open' ? b : undefined;
      });
      expect(open.lastError).toMatch(/HTTP 500/);
      expect(refusesBets(open, clock())).toMatchObject({ refused: true });
      // A probe while it is down keeps it open for a longer cooldown.
      await until('a failed probe', () => (op.requests.some((q) => q.kind === 'balance') ? true : undefined));
      expect((await readBreaker(env.sql, env.operatorId)).state).toBe('open');
      const metrics = await s.metrics.registry.getSingleMetricAsString('wallet_saga_breaker_open');
      expect(metrics).toMatch(new RegExp(`operator="${env.operatorId}"[^}]*} 1`));
      down = false;
      await until('breaker closed', async () =>
        (await readBreaker(env.sql, env.operatorId)).state === 'closed' ? true : undefined,
      );
      expect(refusesBets(await readBreaker(env.sql, env.operatorId), clock())).toEqual({ refused: false });
      // Every bet that failed while it tripped was rolled back: the players are where they started.
      for (const [i] of users.entries())
        await until('rolled back', () =>
          eventsOf(env.events, 'CallbackSucceeded', 40_200 + 4 * i + 2).length ? true : undefined,
        );
      for (const u of users) expect(op.balance(u)).toBe(START);
      expect(reconcileSaga(env.events, op, START)).toEqual([]);
    } finally {
      await s.stop();
    }
  });
});
