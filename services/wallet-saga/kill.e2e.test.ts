/**
 * Kill safety of the wallet saga as real processes (services/wallet-saga/main.ts; the operator is a
 * real HTTP peer in this process; broker and Postgres are real), each run ending reconciled
 * (tests/support/wallet-reconcile.ts):
 * - SIGKILLed while bets and then wins are in flight, and restarted;
 * - SIGKILLed right after a bet's CallbackSucceeded reached the log, the operator failing any
 *   re-send of that bet: no rollback, the bet settles and is paid;
 * - two instances sharing the work, one SIGKILLed under load: its partitions and its leased
 *   callbacks move to the other, nothing lost or doubled.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService } from '../../tests/support/processes.ts';
import { reconcileSaga } from '../../tests/support/wallet-reconcile.ts';
import {
  betPlaced,
  betWon,
  eventsOf,
  type SagaEnv,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from '../../tests/support/wallet-saga.ts';

let op: TestOperator;
let env: SagaEnv;
let saga: Service | undefined;

const USERS = ['k1', 'k2', 'k3', 'k4', 'k5'];
const PER_USER = 4;

async function startSaga(extra: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const s = startService('services/wallet-saga/main.ts', {
    ...env.env,
    WALLET_SAGA_HTTP_PORT: String(port),
    // A SIGKILLed instance's leased callbacks move after this.
    WALLET_SAGA_LEASE_MS: '3000',
    ...extra,
  });
  try {
    await waitFor(
      'saga ready',
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined);
        return r?.status === 200 ? true : undefined;
      },
      60_000,
    );
  } catch (err) {
    await s.stop('SIGKILL');
    throw new Error(`${(err as Error).message}\n${s.output().slice(-3000)}`);
  }
  return s;
}

beforeAll(async () => {
  op = await startTestOperator(100_000);
  env = await startSagaEnv(op, { timeoutMs: 2000, partitions: 4 });
  for (const u of USERS) {
    op.fault(u, 'bet', () => ({ delayMs: 120 }));
    op.fault(u, 'win', () => ({ delayMs: 120 }));
  }
});

// Each test starts its own instances: the one a test leaves running is stopped before the next.
afterEach(async () => {
  await saga?.stop('SIGKILL');
  saga = undefined;
});

afterAll(async () => {
  await saga?.stop('SIGKILL');
  await env?.close();
  await op?.close();
});

it('survives SIGKILL mid-flight without a double debit or credit', async () => {
  const bets: Array<{ tx: number; bet: Awaited<ReturnType<SagaEnv['session']>> }> = [];
  for (const [n, u] of USERS.entries()) {
    const bet = await env.session(u);
    for (let i = 0; i < PER_USER; i++) bets.push({ tx: 8000 + 4 * (n * PER_USER + i + 1), bet });
  }
  const total = bets.length;
  saga = await startSaga();
  for (const b of bets) await env.append(b.bet, [betPlaced(b.bet, b.tx)]);

  // Kill once some but not all bets are acknowledged on the log.
  await waitFor(
    'some bets acknowledged',
    () => (env.events.filter((e) => e.type === 'CallbackSucceeded').length >= 3 ? true : undefined),
    30_000,
    10,
  );
  await saga.stop('SIGKILL');
  const ackedAtKill = env.events.filter((e) => e.type === 'CallbackSucceeded').length;
  expect(ackedAtKill).toBeLessThan(total);

  saga = await startSaga();
  await waitFor(
    'every bet acknowledged',
    () => (bets.every((b) => eventsOf(env.events, 'CallbackSucceeded', b.tx).length > 0) ? true : undefined),
    60_000,
  );

  for (const b of bets) await env.append(b.bet, [betWon(b.bet, b.tx, 1500)]);
  await waitFor(
    'some wins acknowledged',
    () =>
      bets.some((b) => eventsOf(env.events, 'CallbackSucceeded', b.tx + 1).length > 0) ? true : undefined,
    30_000,
    10,
  );
  await saga.stop('SIGKILL');
  saga = await startSaga();
  await waitFor(
    'every win acknowledged',
    () =>
      bets.every((b) => eventsOf(env.events, 'CallbackSucceeded', b.tx + 1).length > 0) ? true : undefined,
    60_000,
  );

  for (const b of bets) {
    expect(op.movements.filter((m) => m.txId === String(b.tx))).toHaveLength(1);
    expect(op.movements.filter((m) => m.txId === String(b.tx + 1))).toHaveLength(1);
  }
  for (const u of USERS) expect(op.balance(u)).toBe(100_000 + PER_USER * (1500 - 1000));
  // The kills really interrupted work: the operator saw repeated requests that it answered idempotently.
  const requests = op.requests.filter((r) => r.kind === 'bet' || r.kind === 'win').length;
  console.log(
    `kill test: ${requests} bet/win requests for ${2 * total} transactions; ${ackedAtKill} acked at the first kill`,
  );
  expect(requests).toBeGreaterThanOrEqual(2 * total);
  expect(reconcileSaga(env.events, op, 100_000)).toEqual([]);
});

it('a bet confirmed on the log just before a SIGKILL is never rolled back when the operator fails its re-send', async () => {
  saga = await startSaga();
  const bet = await env.session('confirmed');
  const tx = 9_000;
  // The first attempt books the debit; any re-send of that bet would fail.
  op.fault('confirmed', 'bet', (attempt) => (attempt === 1 ? { delayMs: 50 } : 'error500'));
  await env.append(bet, [betPlaced(bet, tx)]);
  await waitFor(
    'CallbackSucceeded{bet} on the log',
    () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined),
    30_000,
    2,
  );
  await saga.stop('SIGKILL');
  saga = await startSaga();
  await env.append(bet, [betWon(bet, tx, 3000)]);
  await waitFor(
    'win credited',
    () => (eventsOf(env.events, 'CallbackSucceeded', tx + 1).length ? true : undefined),
    60_000,
  );
  const mine = env.events.filter((e) => [tx, tx + 1, tx + 2].includes(e.value.tx_id));
  expect(mine.map((e) => e.type)).not.toContain('RollbackRequested');
  expect(mine.map((e) => e.type)).not.toContain('BetRejected');
  expect(op.movements.filter((m) => m.txId === String(tx))).toHaveLength(1);
  expect(op.balance('confirmed')).toBe(100_000 - 1000 + 3000);
  expect(reconcileSaga(env.events, op, 100_000)).toEqual([]);
});

it('two instances share the work; SIGKILL of one under load loses and doubles nothing', async () => {
  await saga?.stop('SIGKILL');
  saga = await startSaga({ WALLET_SAGA_INSTANCE: 'saga-a' });
  let b: Service | undefined = await startSaga({ WALLET_SAGA_INSTANCE: 'saga-b' });
  try {
    const players = Array.from({ length: 24 }, (_, i) => `pair-${i}`);
    const bets: Array<{ tx: number; bet: Awaited<ReturnType<SagaEnv['session']>> }> = [];
    for (const [i, u] of players.entries()) {
      op.fault(u, 'bet', () => ({ delayMs: 40 }));
      op.fault(u, 'win', () => ({ delayMs: 40 }));
      const bet = await env.session(u);
      for (let k = 0; k < 3; k++) bets.push({ tx: 10_000 + 4 * (i * 3 + k), bet });
    }
    for (const x of bets) await env.append(x.bet, [betPlaced(x.bet, x.tx)]);
    await waitFor(
      'both at work',
      () => {
        const by = new Set(
          op.requests.filter((q) => q.kind === 'bet').map((q) => String(q.headers['webhook-id'])),
        );
        return by.size >= 10 ? true : undefined;
      },
      30_000,
      5,
    );
    await b.stop('SIGKILL');
    b = undefined;
    await waitFor(
      'every bet debited',
      () => (bets.every((x) => eventsOf(env.events, 'CallbackSucceeded', x.tx).length) ? true : undefined),
      90_000,
    );
    for (const x of bets) await env.append(x.bet, [betWon(x.bet, x.tx, 1200)]);
    await waitFor(
      'every win credited',
      () =>
        bets.every((x) => eventsOf(env.events, 'CallbackSucceeded', x.tx + 1).length) ? true : undefined,
      90_000,
    );
    for (const x of bets) {
      expect(op.movements.filter((m) => m.txId === String(x.tx))).toHaveLength(1);
      expect(op.movements.filter((m) => m.txId === String(x.tx + 1))).toHaveLength(1);
    }
    expect(reconcileSaga(env.events, op, 100_000)).toEqual([]);
  } finally {
    await b?.stop('SIGKILL');
  }
});
