/**
 * Graceful stop of the wallet saga:
 * services/wallet-saga/main.ts is sent SIGTERM while bet callbacks are in flight. It exits 0
 * within SHUTDOWN_TIMEOUT_MS; every callback the operator received before the stop has its outcome
 * on the log (the attempt in flight finishes and its result is stored and appended; due ones are not
 * started); every callback not done is still due in Postgres; and after a restart the operator sees
 * no request again for a callback whose outcome was on the log, and each bet moved money once. The
 * operator is a real HTTP peer in this process; broker and Postgres are the shared ones.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readRange } from '../lib/log/kafka.ts';
import { topicName } from '../lib/log/topics.ts';
import { decodeWalletEvent } from '../lib/log/wallet-events.ts';
import { waitFor } from './support/poll.ts';
import { freePort, type Service, startService, timedStop, waitReady } from './support/processes.ts';
import {
  betPlaced,
  eventsOf,
  type SagaEnv,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from './support/wallet-saga.ts';

const BOUND_MS = 15_000;
const USERS = ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'];
const PER_USER = 6;
let op: TestOperator;
let env: SagaEnv;
let saga: Service | undefined;

async function startSaga(): Promise<Service> {
  const port = await freePort();
  const s = startService('services/wallet-saga/main.ts', {
    ...env.env,
    WALLET_SAGA_HTTP_PORT: String(port),
    SHUTDOWN_TIMEOUT_MS: String(BOUND_MS),
  });
  await waitReady(`http://127.0.0.1:${port}/ready`);
  return s;
}

/** Offset of each BetPlaced by tx id, and the tx ids with an outcome (answered or refused), from the log. */
async function readLog(): Promise<{ placedAt: Map<number, bigint>; done: Set<number> }> {
  const placedAt = new Map<number, bigint>();
  const done = new Set<number>();
  await readRange(env.kafka, topicName(env.config, 'walletTransactions'), new Map([[0, 0n]]), (r) => {
    const e = decodeWalletEvent(r.message.value);
    if (e.type === 'BetPlaced') placedAt.set(e.value.tx_id, BigInt(r.offset));
    else if (e.type === 'CallbackSucceeded' || e.type === 'BetRejected') done.add(e.value.tx_id);
  });
  return { placedAt, done };
}

beforeAll(async () => {
  op = await startTestOperator(100_000);
  env = await startSagaEnv(op, { timeoutMs: 5000 });
  for (const u of USERS) op.fault(u, 'bet', () => ({ delayMs: 250 }));
});

afterAll(async () => {
  await saga?.stop('SIGKILL');
  await env?.close();
  await op?.close();
});

it('stops with nothing half-done and, restarted, re-sends nothing whose outcome is on the log', async () => {
  const txs: number[] = [];
  saga = await startSaga();
  for (const [n, u] of USERS.entries()) {
    const bet = await env.session(u);
    for (let i = 0; i < PER_USER; i++) {
      const tx = 20_000 + 4 * (n * PER_USER + i + 1);
      txs.push(tx);
      await env.append(bet, [betPlaced(bet, tx)]);
    }
  }
  await waitFor(
    'some bets acknowledged',
    () => (env.events.filter((e) => e.type === 'CallbackSucceeded').length >= 6 ? true : undefined),
    30_000,
    10,
  );
  const { code, ms: stopMs } = await timedStop(saga, BOUND_MS + 10_000);
  expect(code).toBe(0);
  expect(stopMs).toBeLessThan(BOUND_MS);

  const requestedBeforeStop = new Set(op.requests.map((r) => Number(r.body.provider_tx_id)));
  const { done } = await readLog();
  expect(done.size).toBeLessThan(txs.length); // stopped mid-work
  // The attempt in flight finished and its outcome was appended: nothing half-done.
  expect([...requestedBeforeStop].filter((tx) => !done.has(tx))).toEqual([]);
  // What is not done waits, due, in Postgres (none left leased by the stopped instance).
  const left = await env.sql<{ tx_id: string; status: string }[]>`
    select tx_id::text, status from wallet_callbacks where kind = 'bet' and status <> 'done'`;
  expect(left.every((r) => r.status === 'due')).toBe(true);
  expect(left.map((r) => Number(r.tx_id)).sort()).toEqual(txs.filter((tx) => !done.has(tx)).sort());

  const requestsAtStop = op.requests.length;
  saga = await startSaga();
  await waitFor(
    'every bet acknowledged',
    () => (txs.every((tx) => eventsOf(env.events, 'CallbackSucceeded', tx).length > 0) ? true : undefined),
    60_000,
  );
  const again = op.requests.slice(requestsAtStop).map((r) => Number(r.body.provider_tx_id));
  // No callback whose outcome was on the log is sent again (its result is stored with it) …
  expect(again.filter((tx) => done.has(tx))).toEqual([]);
  // … and each bet moved money exactly once.
  for (const tx of txs) expect(op.movements.filter((m) => m.txId === String(tx))).toHaveLength(1);
  expect((await saga.stop('SIGTERM', BOUND_MS + 10_000)) as number).toBe(0);
  console.info(
    `graceful saga: SIGTERM took ${Math.round(stopMs)} ms; ${done.size} of ${txs.length} bets done at the stop; none re-sent after the restart`,
  );
});
