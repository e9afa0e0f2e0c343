/**
 * Kill safety: services/wallet-saga/main.ts is SIGKILLed while bets and then wins are in flight,
 * restarted, and at the end the operator's ledger shows each bet debited once and each win
 * credited once (the operator is a real HTTP peer in this process; broker and Postgres are real).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService } from '../../tests/support/processes.ts';
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

async function startSaga(): Promise<Service> {
  const port = await freePort();
  const s = startService('services/wallet-saga/main.ts', { ...env.env, WALLET_SAGA_HTTP_PORT: String(port) });
  await waitFor(
    'saga ready',
    async () => {
      const r = await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined);
      return r?.status === 200 ? true : undefined;
    },
    60_000,
  );
  return s;
}

beforeAll(async () => {
  op = await startTestOperator(100_000);
  env = await startSagaEnv(op, { timeoutMs: 5000 });
  for (const u of USERS) {
    op.fault(u, 'bet', () => ({ delayMs: 120 }));
    op.fault(u, 'win', () => ({ delayMs: 120 }));
  }
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
});
