/**
 * The dispatcher's send queue against the real broker and Postgres and a real HTTP operator
 * (services/wallet-saga/send-queue.ts, dispatcher.ts): with one send slot and a slow wallet,
 * callbacks wait in the queue for longer than a whole lease. The lease keeper must keep their
 * leases, so none is leased a second time (attempts stay 1) and each reaches the operator once; a
 * copy that did lose its lease would send nothing (fencing, services/wallet-saga/store.int.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import {
  betPlaced,
  eventsOf,
  type SagaEnv,
  sagaOver,
  startedSaga,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from '../support/wallet-saga.ts';

let op: TestOperator;
let env: SagaEnv;
let saga: WalletSaga;
const LEASE_MS = 1_000;
const OPERATOR_MS = 700;

beforeAll(async () => {
  op = await startTestOperator(10_000);
  env = await startSagaEnv(op, { timeoutMs: 3000 });
  saga = await startedSaga(
    sagaOver(env, { walletSaga: { leaseMs: LEASE_MS, operatorConcurrency: 1, pollMs: 50 } }),
  );
});

afterAll(async () => {
  await saga?.stop();
  await env?.close();
  await op?.close();
});

describe('callbacks waiting for a send slot longer than a lease', () => {
  it('keep their leases and reach the operator once each', async () => {
    const players = ['q-1', 'q-2', 'q-3', 'q-4', 'q-5'];
    const txs: number[] = [];
    for (const [i, user] of players.entries()) {
      op.fault(user, 'bet', () => ({ delayMs: OPERATOR_MS }));
      const bet = await env.session(user);
      const tx = 9000 + i * 4;
      txs.push(tx);
      await env.append(bet, [betPlaced(bet, tx)]);
    }
    await waitFor(
      'every debit answered',
      () =>
        txs.every((tx) => eventsOf(env.events, 'CallbackSucceeded', tx).length === 1) ? true : undefined,
      30_000,
      50,
    );
    const sent = txs.map((tx) => op.requests.filter((r) => r.body.provider_tx_id === tx).length);
    expect(sent).toEqual(txs.map(() => 1));
    // One slot, 0.7 s a debit: the last waited about 2.8 s, well past the 1 s lease.
    const at = txs.map((tx) => op.requests.find((r) => r.body.provider_tx_id === tx)?.at ?? 0);
    expect(Math.max(...at) - Math.min(...at)).toBeGreaterThan(2 * LEASE_MS);
    // Never leased twice: one attempt each, done; each debit moved money once.
    const rows = await env.sql<{ tx_id: string; attempts: number; status: string }[]>`
      select tx_id::text, attempts, status from wallet_callbacks
      where tx_id = any(${txs.map(String)}::bigint[]) order by tx_id`;
    expect(rows.map((r) => [Number(r.tx_id), r.attempts, r.status])).toEqual(
      txs.map((tx) => [tx, 1, 'done']),
    );
    for (const tx of txs) expect(op.movements.filter((m) => m.txId === String(tx))).toHaveLength(1);
  });
});
