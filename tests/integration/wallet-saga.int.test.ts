/**
 * The wallet saga against the real broker and Postgres and a real HTTP operator
 * (tests/support/wallet-saga.ts): the answers to a debit, a win retried on the schedule, a parked
 * win that ops list and re-drive (lib/db/wallet-callbacks.ts), no head-of-line blocking, and the
 * ops endpoints. One partition, so every player shares it (the head-of-line case).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCallback, listCallbacks, redriveCallbacks } from '../../lib/db/wallet-callbacks.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { samplesOf, sampleValue } from '../support/metrics.ts';
import { waitFor } from '../support/poll.ts';
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

let op: TestOperator;
let env: SagaEnv;
let saga: WalletSaga;
let nextTx = 4000;
const newTx = () => {
  nextTx += 4;
  return nextTx;
};
const types = (txId: number) => env.events.filter((e) => e.value.tx_id === txId).map((e) => e.type);
const until = <T>(what: string, check: () => T | undefined, ms = 20_000) => waitFor(what, check, ms, 50);

beforeAll(async () => {
  op = await startTestOperator(10_000);
  env = await startSagaEnv(op, { timeoutMs: 2000 });
  // A short lag refresh, so the parked backlog shows on /metrics quickly.
  saga = await startedSaga(sagaOver(env, { kafka: { lagRefreshMs: 200 } }));
});

afterAll(async () => {
  await saga?.stop();
  await env?.close();
  await op?.close();
});

describe('wallet saga', () => {
  it('a bet debited → CallbackSucceeded{bet} with the operator balances', async () => {
    const bet = await env.session('alice');
    const tx = newTx();
    await env.append(bet, [betPlaced(bet, tx)]);
    const [ok] = await until('bet succeeded', () => {
      const e = eventsOf(env.events, 'CallbackSucceeded', tx);
      return e.length ? e : undefined;
    });
    expect(ok?.value).toMatchObject({
      kind: 'bet',
      bet_tx_id: tx,
      operator_tx_id: `op-${tx}`,
      old_balance: '100.00',
      new_balance: '90.00',
      attempts: 1,
    });
    expect(op.balance('alice')).toBe(9000);
    const req = op.requests.find((r) => r.body.provider_tx_id === tx);
    expect(req?.headers['webhook-id']).toBe(`bet-${tx}`);
    expect(req?.body).toMatchObject({
      action: 'bet',
      amount: '10.00',
      session_token: `st-${bet.session_id}`,
    });
  });

  it('operator 402 → CallbackFailed{refused} and BetRejected only: no rollback, no money moved', async () => {
    const bet = await env.session('poor', { amount_minor: 50_000 });
    const tx = newTx();
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('rejected', () => (eventsOf(env.events, 'BetRejected', tx).length ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(types(tx)).toEqual(['BetPlaced', 'CallbackFailed', 'BetRejected']);
    expect(eventsOf(env.events, 'CallbackFailed', tx)[0]?.value).toMatchObject({
      answer: 'refused',
      code: 'INSUFFICIENT_FUNDS',
      parked: false,
    });
    expect(eventsOf(env.events, 'BetRejected', tx)[0]?.value).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(op.requests.filter((r) => r.kind === 'rollback' && r.body.linked_tx_id === tx)).toHaveLength(0);
    expect(op.balance('poor')).toBe(10_000);
  });

  it.each([
    ['500', 'error500' as const, 'OPERATOR_ERROR'],
    ['timeout', { delayMs: 2600 }, 'TIMEOUT'],
    ['malformed JSON after commit', 'malformedAfterCommit' as const, 'OPERATOR_ERROR'],
  ])(
    'operator %s on a bet → BetRejected + RollbackRequested and the rollback is made',
    async (name, fault, code) => {
      const user = `u-${name.replace(/\W/g, '')}`;
      const bet = await env.session(user);
      op.fault(user, 'bet', () => fault);
      const tx = newTx();
      await env.append(bet, [betPlaced(bet, tx)]);
      await until('rollback acknowledged', () =>
        eventsOf(env.events, 'CallbackSucceeded', tx + 2).length ? true : undefined,
      );
      expect(types(tx)).toEqual(['BetPlaced', 'CallbackFailed', 'BetRejected']);
      expect(eventsOf(env.events, 'BetRejected', tx)[0]?.value).toMatchObject({ code });
      expect(eventsOf(env.events, 'RollbackRequested', tx + 2)[0]?.value).toMatchObject({ linked_tx_id: tx });
      const rb = op.requests.filter((r) => r.kind === 'rollback' && r.body.provider_tx_id === tx + 2);
      expect(rb.length).toBeGreaterThanOrEqual(1);
      expect(rb[0]?.headers['webhook-id']).toBe(`rollback-${tx + 2}`);
      // Whatever the bet did at the operator, the player ends where they started.
      await until('balance restored', () => (op.balance(user) === 10_000 ? true : undefined), 5000);
    },
  );

  it('a win is retried through transient 500s until acknowledged, and credited once', async () => {
    const bet = await env.session('winner');
    const tx = newTx();
    op.fault('winner', 'win', (attempt) => (attempt <= 2 ? 'error500' : 'none'));
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('bet ok', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
    await env.append(bet, [betWon(bet, tx, 2500)]);
    const [ok] = await until('win ok', () => {
      const e = eventsOf(env.events, 'CallbackSucceeded', tx + 1);
      return e.length ? e : undefined;
    });
    expect(ok?.value).toMatchObject({ kind: 'win', attempts: 3, bet_tx_id: tx, amount_minor: 2500 });
    const wins = op.requests.filter((r) => r.kind === 'win' && r.body.provider_tx_id === tx + 1);
    expect(wins).toHaveLength(3);
    expect(new Set(wins.map((r) => r.headers['webhook-id']))).toEqual(new Set([`win-${tx + 1}`]));
    expect(new Set(wins.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(op.movements.filter((m) => m.txId === String(tx + 1))).toHaveLength(1);
    expect(op.balance('winner')).toBe(10_000 - 1000 + 2500);
  });

  it('a win whose retries are used up is parked; ops list it, re-drive it, and it is credited once', async () => {
    const bet = await env.session('parked');
    const tx = newTx();
    let down = true;
    op.fault('parked', 'win', () => (down ? 'error500' : 'none'));
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('bet ok', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
    await env.append(bet, [betWon(bet, tx, 3000)]);
    const parked = await until('CallbackFailed parked', () =>
      eventsOf(env.events, 'CallbackFailed', tx + 1).find((e) => (e.value as { parked: boolean }).parked),
    );
    expect(parked.value).toMatchObject({ kind: 'win', attempts: 4, answer: 'failed', next_attempt_at: null });
    // Each failed attempt before it named the next one.
    const retries = eventsOf(env.events, 'CallbackFailed', tx + 1).filter(
      (e) => !(e.value as { parked: boolean }).parked,
    );
    expect(retries).toHaveLength(3);
    for (const r of retries)
      expect((r.value as { next_attempt_at: number | null }).next_attempt_at).toBeGreaterThan(0);
    expect(op.balance('parked')).toBe(9000);

    const listed = await listCallbacks(env.sql, { status: 'parked', userId: 'parked' });
    expect(listed.map((c) => [c.tx_id, c.kind, c.attempts, c.last_answer])).toEqual([
      [tx + 1, 'win', 4, 'failed'],
    ]);
    expect(listed[0]?.last_response).toMatch(/^HTTP 500/);
    expect(JSON.parse(listed[0]?.last_request ?? '{}')).toMatchObject({
      provider_tx_id: tx + 1,
      action: 'win',
    });
    expect(await listCallbacks(env.sql, { status: 'parked', operatorId: 'another-operator' })).toEqual([]);

    down = false;
    const first = await redriveCallbacks(env.sql, { txId: tx + 1 }, Date.now());
    expect(first.map((c) => c.tx_id)).toEqual([tx + 1]);
    await until('win ok after the re-drive', () =>
      eventsOf(env.events, 'CallbackSucceeded', tx + 1).length ? true : undefined,
    );
    expect(op.balance('parked')).toBe(9000 + 3000);
    expect(await getCallback(env.sql, tx + 1)).toMatchObject({
      status: 'done',
      attempts: 1,
      last_answer: 'ok',
    });
    // Done: a second re-drive finds nothing, and nothing was credited twice.
    expect(await redriveCallbacks(env.sql, { txId: tx + 1 }, Date.now())).toEqual([]);
    expect(op.movements.filter((m) => m.txId === String(tx + 1))).toHaveLength(1);
  });

  it('a slow player does not delay another player on the same partition', async () => {
    const slow = await env.session('slowpoke');
    const fast = await env.session('speedy');
    // Under the operator's 2 s timeout (startSagaEnv above); the checks are about order, not speed.
    const SLOW_MS = 1500;
    op.fault('slowpoke', 'bet', () => ({ delayMs: SLOW_MS }));
    const slowTx = newTx();
    const fastTx = newTx();
    const t0 = Date.now();
    await env.append(slow, [betPlaced(slow, slowTx)]);
    await env.append(fast, [betPlaced(fast, fastTx)]);
    await until('fast done', () =>
      eventsOf(env.events, 'CallbackSucceeded', fastTx).length ? true : undefined,
    );
    const fastMs = Date.now() - t0;
    // The fast player's debit succeeded while the slow player's, appended first, was still pending.
    const slowPendingThen = eventsOf(env.events, 'CallbackSucceeded', slowTx).length === 0;
    await until('slow done', () =>
      eventsOf(env.events, 'CallbackSucceeded', slowTx).length ? true : undefined,
    );
    const slowMs = Date.now() - t0;
    console.log(`head-of-line check: fast player ${fastMs} ms, slow player ${slowMs} ms`);
    expect(slowPendingThen).toBe(true);
    expect(slowMs).toBeGreaterThanOrEqual(SLOW_MS);
    expect(fastMs).toBeLessThan(slowMs);
    // The fast player's callback reached the operator while the slow one was still being answered.
    const fastReq = op.requests.find((r) => r.body.provider_tx_id === fastTx);
    const slowReq = op.requests.find((r) => r.body.provider_tx_id === slowTx);
    expect(fastReq && slowReq && fastReq.at - slowReq.at).toBeLessThan(SLOW_MS);
  });

  it('serves /health, /ready and /metrics: attempts, retries, parked, consumer lag', async () => {
    const ops = await startOpsServerFor(saga, '127.0.0.1', 0);
    const idle = startOpsServerFor(sagaOver(env, { name: 'idle' }), '127.0.0.1', 0);
    try {
      const url = (path: string) => `http://127.0.0.1:${ops.port}${path}`;
      expect((await fetch(url('/health'))).status).toBe(200);
      const ready = await fetch(url('/ready'));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, consumer: true, database: true });
      // A saga that has not joined its group is not ready.
      expect((await fetch(`http://127.0.0.1:${(await idle).port}/ready`)).status).toBe(503);

      // Everything finished: the processes' lag is 0.
      const text = await waitFor('lag 0 for the saga', async () => {
        const t = await (await fetch(url('/metrics'))).text();
        const lags = samplesOf(t, 'kafka_consumer_lag').filter((s) => s.labels.consumer === 'wallet-saga');
        return lags.length > 0 && lags.every((s) => s.value === 0) ? t : undefined;
      });
      expect(
        sampleValue(text, 'wallet_saga_callback_attempts_total', { kind: 'bet', answer: 'ok' }),
      ).toBeGreaterThan(0);
      expect(sampleValue(text, 'wallet_saga_callbacks_scheduled_total', { kind: 'win' })).toBeGreaterThan(0);
      expect(sampleValue(text, 'wallet_saga_parked_total', { kind: 'win' })).toBe(1);
      expect(sampleValue(text, 'wallet_saga_retries_total', { kind: 'win' })).toBeGreaterThan(0);
      expect(
        sampleValue(text, 'wallet_saga_callback_attempts_total', { kind: 'win', answer: 'failed' }),
      ).toBeGreaterThan(0);
      expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'wallet-saga' })).toBeGreaterThan(
        0,
      );
    } finally {
      await ops.close();
      await (await idle).close();
    }
  });
});
