/**
 * The operator portal's view of the money path on the real saga, broker and Postgres
 * (tests/support/wallet-saga.ts):
 * - every attempt of a callback is recorded (wallet_callback_attempts, migration 016): a win the
 *   operator answers 500 twice and then books has three attempts, each with the request body and
 *   Standard Webhooks headers it was sent with (verifiable with the operator's secret), the answer's
 *   status, latency, class and the next attempt's time the saga's CallbackFailed facts announced; an
 *   answer body holding U+0000 is recorded (as U+FFFD) rather than failing the batch;
 * - a signing-secret rotation with overlap (lib/db/operator-config.ts `rotateSigningSecret`) while
 *   bets flow to the operator sandbox (listening on a socket, its own ledger schema): once the saga
 *   has picked the rotation up (within its operator cache's lifetime) every callback carries both
 *   signatures, the sandbox switches to the new secret mid-way (PUT /_sandbox/signing-secret), and
 *   not one callback is refused for its signature (nor the API's balance request, before and after
 *   the switch); every bet and win is booked once and each player's balance at the sandbox is what
 *   the log implies.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../lib/db/operator-config.ts';
import { getCallback, listAttempts } from '../../lib/db/wallet-callbacks.ts';
import { fetchOperatorBalance } from '../../services/api/access/balance.ts';
import type { OperatorRow } from '../../services/api/access/guards.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
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
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 20_000) =>
  waitFor(what, check, ms, 25);

describe('every attempt of a callback is recorded', () => {
  let op: TestOperator;
  let env: SagaEnv;
  let saga: WalletSaga | undefined;
  beforeAll(async () => {
    op = await startTestOperator(START);
    env = await startSagaEnv(op, { timeoutMs: 2000 });
    saga = await startedSaga(sagaOver(env, { walletSaga: { pollMs: 50 } }));
  }, 60_000);
  afterAll(async () => {
    await saga?.stop();
    await env?.close();
    await op?.close();
  });

  it('records a win answered 500, 500 then booked as three attempts with request, signature, status, latency, class and next time', async () => {
    const bet = await env.session('thrice');
    const tx = 70_000;
    op.fault('thrice', 'win', (attempt) => (attempt <= 2 ? 'error500' : 'none'));
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('debit', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
    await env.append(bet, [betWon(bet, tx, 2500)]);
    await until('win', () => (eventsOf(env.events, 'CallbackSucceeded', tx + 1).length ? true : undefined));
    expect(await getCallback(env.sql, tx + 1)).toMatchObject({ status: 'done', attempts: 3 });

    const attempts = await listAttempts(env.sql, tx + 1, env.operatorId);
    expect(attempts.map((a) => [a.attempt, a.response.status, a.class, a.code])).toEqual([
      [1, 500, 'failed', 'OPERATOR_ERROR'],
      [2, 500, 'failed', 'OPERATOR_ERROR'],
      [3, 200, 'ok', null],
    ]);
    // The times of the next attempts are those the saga's facts announced.
    const failed = eventsOf(env.events, 'CallbackFailed', tx + 1).map(
      (e) => (e.value as { next_attempt_at: number | null }).next_attempt_at,
    );
    expect(attempts.map((a) => a.next_attempt_at)).toEqual([
      new Date(failed[0] as number).toISOString(),
      new Date(failed[1] as number).toISOString(),
      null,
    ]);
    const seen = op.requests.filter((r) => r.kind === 'win' && r.body.provider_tx_id === tx + 1);
    expect(seen).toHaveLength(3);
    const wh = new Webhook(op.secret);
    for (const [i, a] of attempts.entries()) {
      expect(a.request.method).toBe('POST');
      expect(a.request.url).toBe(`${op.url}/wallet/win`);
      expect(Object.keys(a.request.headers ?? {}).sort()).toEqual([
        'content-type',
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
      ]);
      expect(a.request.headers?.['webhook-signature']).toBe(seen[i]?.headers['webhook-signature']);
      expect(JSON.parse(a.request.body ?? '')).toEqual(seen[i]?.body);
      // Verifiable as recorded: the body and headers are exactly what was signed and sent.
      expect(() => wh.verify(a.request.body ?? '', a.request.headers ?? {})).not.toThrow();
      expect(Number.isInteger(a.latency_ms) && a.latency_ms >= 0 && a.latency_ms < 2000).toBe(true);
      expect(a.error === null).toBe(i === 2);
      if (i > 0) expect(Date.parse(a.at)).toBeGreaterThanOrEqual(Date.parse(attempts[i - 1]?.at ?? ''));
    }
    expect(attempts[0]?.response.body).toContain('INTERNAL');
    // The debit: one attempt, booked.
    expect((await listAttempts(env.sql, tx)).map((a) => [a.attempt, a.class])).toEqual([[1, 'ok']]);
    expect(reconcileSaga(env.events, op, START)).toEqual([]);
  });

  it('stores an answer body holding U+0000 (as U+FFFD) and goes on: the attempt recorded, the win booked on the retry', async () => {
    const bet = await env.session('nul');
    const tx = 71_000;
    op.fault('nul', 'win', (attempt) =>
      attempt === 1 ? { reply: { status: 500, body: 'down\u0000now' }, commit: false } : 'none',
    );
    await env.append(bet, [betPlaced(bet, tx)]);
    await until('debit', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
    await env.append(bet, [betWon(bet, tx, 700)]);
    await until('win', () => (eventsOf(env.events, 'CallbackSucceeded', tx + 1).length ? true : undefined));
    const attempts = await listAttempts(env.sql, tx + 1, env.operatorId);
    expect(attempts.map((a) => [a.attempt, a.response.status, a.response.body, a.class])).toEqual([
      [1, 500, 'down\uFFFDnow', 'failed'],
      [2, 200, expect.any(String), 'ok'],
    ]);
    // The fact for the read model carries the answer's reason without U+0000 (Postgres text).
    const failed = eventsOf(env.events, 'CallbackFailed', tx + 1);
    expect(failed.map((e) => (e.value as { error: string }).error)).toEqual([
      'HTTP 500 HTTP_500: down\uFFFDnow',
    ]);
    expect(reconcileSaga(env.events, op, START)).toEqual([]);
  });
});

describe('a signing-secret rotation while bets flow to the sandbox', () => {
  /** The saga's operator cache lifetime in this test, ms: the bound on picking a rotation up. */
  const CACHE_MS = 1_000;
  let sbx: TestSandbox;
  let env: SagaEnv;
  let saga: WalletSaga | undefined;
  beforeAll(async () => {
    sbx = await startTestSandbox();
    await sbx.app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(sbx.app.server.address() as AddressInfo).port}`;
    env = await startSagaEnv({ url, secret: sbx.secret }, { timeoutMs: 2_000 });
    saga = await startedSaga(sagaOver(env, { walletSaga: { pollMs: 50, cacheMs: CACHE_MS } }));
  }, 60_000);
  afterAll(async () => {
    await saga?.stop();
    await env?.close();
    await sbx?.close();
  });

  const invalidSignatures = async () => {
    const text = (await sbx.app.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(/^sandbox_invalid_signatures_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };

  it('refuses no callback for its signature, before, during and after the switch, and the ledger reconciles', async () => {
    const player = `rot-${randomUUID().slice(0, 8)}`;
    const bets: number[] = [];
    let next = 90_000;
    /** One bet and its win (tx + 1 pays 25.00), appended as settlement would: win after the debit. */
    const betAndWin = async () => {
      const bet = await env.session(player);
      const tx = next;
      next += 4;
      bets.push(tx);
      await env.append(bet, [betPlaced(bet, tx)]);
      await until('debit', () => (eventsOf(env.events, 'CallbackSucceeded', tx).length ? true : undefined));
      await env.append(bet, [betWon(bet, tx, 2_500)]);
    };
    for (let i = 0; i < 4; i++) await betAndWin();

    const rotatedAt = Date.now();
    const rotated = await rotateSigningSecret(env.sql, env.operatorId, 300, rotatedAt);
    expect(rotated?.previousValidUntil).toBe(rotatedAt + 300_000);
    const newSecret = rotated?.signingSecret ?? '';
    expect(newSecret).toMatch(/^whsec_/);
    // Bets go on while the saga picks the rotation up (at most CACHE_MS), still verified with the old secret.
    const pickedUp = Date.now() + CACHE_MS + 200;
    while (Date.now() < pickedUp) await betAndWin();
    const balance = async () => {
      const [row] = await env.sql<
        OperatorRow[]
      >`select * from operators where operator_id = ${env.operatorId}`;
      const session = { user_id: player, currency: 'EUR', session_token: 'st-balance' };
      return (await fetchOperatorBalance(row as OperatorRow, session)).balance;
    };
    // The API's balance request reads the row each time: both signatures at once, either secret verifies.
    expect(await balance()).toMatch(/^\d+\.\d{2}$/);
    expect((await sbx.put('/_sandbox/signing-secret', { secret: newSecret })).status).toBe(204);
    expect(await balance()).toMatch(/^\d+\.\d{2}$/);
    for (let i = 0; i < 4; i++) await betAndWin();

    const all = bets.flatMap((tx) => [tx, tx + 1]);
    await until(
      'every bet and win booked',
      () => (all.every((tx) => eventsOf(env.events, 'CallbackSucceeded', tx).length) ? true : undefined),
      30_000,
    );
    expect(await invalidSignatures()).toBe(0);
    expect(env.events.filter((e) => e.type === 'CallbackFailed')).toEqual([]);

    // One attempt each, all booked; after the pick-up every one carries the new and the old signature.
    const oldWh = new Webhook(sbx.secret);
    const newWh = new Webhook(newSecret);
    let both = 0;
    for (const tx of all) {
      const attempts = await listAttempts(env.sql, tx, env.operatorId);
      expect(attempts.map((a) => [a.attempt, a.class, a.response.status])).toEqual([[1, 'ok', 200]]);
      const a = attempts[0];
      const sigs = (a?.request.headers?.['webhook-signature'] ?? '').split(' ');
      const at = Date.parse(a?.at ?? '');
      if (at < rotatedAt) expect(sigs).toHaveLength(1);
      if (at >= rotatedAt + CACHE_MS) expect(sigs).toHaveLength(2);
      if (sigs.length === 2) {
        both++;
        // Each signature is its own secret's: new first, then old.
        const headers = a?.request.headers ?? {};
        const one = (s: string | undefined) => ({ ...headers, 'webhook-signature': s ?? '' });
        expect(() => newWh.verify(a?.request.body ?? '', one(sigs[0]))).not.toThrow();
        expect(() => oldWh.verify(a?.request.body ?? '', one(sigs[1]))).not.toThrow();
      }
    }
    expect(both).toBeGreaterThanOrEqual(8);

    // The sandbox booked each bet and win once: the balance is the log's.
    const ledger = (
      await sbx.app.inject({ method: 'GET', url: `/_sandbox/ledger?user_id=${player}&currency=EUR` })
    ).json() as { balance_minor: number; transactions: { provider_tx_id: string; kind: string }[] };
    expect(ledger.transactions.map((t) => Number(t.provider_tx_id)).sort((x, y) => x - y)).toEqual(all);
    expect(ledger.balance_minor).toBe(START + bets.length * (2_500 - 1_000));
  }, 90_000);
});
