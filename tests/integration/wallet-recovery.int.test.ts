/**
 * A player's win after a short outage of the operator's win path, as it was found (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward): the operator sandbox (services/operator-sandbox,
 * listening on a socket, its own ledger schema) answers 500 on its win path (PUT /_sandbox/faults,
 * kind `win`: wins and zero-amount round closes) while its bet path keeps answering; the real saga,
 * broker and Postgres (tests/support/wallet-saga.ts). The wins and closes that failed their first
 * retry inside the outage must be credited within seconds of the win path's first success, not at
 * the schedule's next step.
 *
 * The same when the whole wallet was down and the first sign of it being back is the circuit
 * breaker's balance probe: the probe that closes the breaker pulls the retries forward.
 *
 * The operator's schedule is shortened as the other wallet tests shorten it: a 500 ms first retry
 * and a 60 s second step (the published default's are 5 s and 5 min), no jitter.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBreaker } from '../../lib/db/operator-breakers.ts';
import { getCallback } from '../../lib/db/wallet-callbacks.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import {
  betLost,
  betPlaced,
  betWon,
  eventsOf,
  type SagaEnv,
  sagaOver,
  startedSaga,
  startSagaEnv,
} from '../support/wallet-saga.ts';

/** The schedule's second step, ms: what a win failing twice waits for without pulling forward. */
const SECOND_STEP_MS = 60_000;
/** The sandbox's first balance of an account (SANDBOX_INITIAL_BALANCE 1000.00), minor units. */
const START = 100_000;

let sbx: TestSandbox;
let url: string;
/** The saga environment of the running test (one per describe: breakers are per operator). */
let env: SagaEnv;

beforeAll(async () => {
  sbx = await startTestSandbox();
  await sbx.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(sbx.app.server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await sbx?.close();
});

/** A saga over an environment of its own whose operator is the sandbox (stopped after the describe). */
function sagaPerDescribe(breaker?: { failures: number; cooldownMs: number; maxCooldownMs: number }) {
  let saga: WalletSaga | undefined;
  beforeAll(async () => {
    env = await startSagaEnv(
      { url, secret: sbx.secret },
      { timeoutMs: 2_000, retryPolicy: { delaysMs: [500, SECOND_STEP_MS], jitter: 0 } },
    );
    saga = await startedSaga(sagaOver(env, { walletSaga: { pollMs: 50, ...(breaker ? { breaker } : {}) } }));
  }, 60_000);
  afterAll(async () => {
    await saga?.stop();
    await env?.close();
  });
}

const succeeded = (tx: number) =>
  eventsOf(env.events, 'CallbackSucceeded', tx)[0]?.value as
    | { at: number; attempts: number; kind: string }
    | undefined;

/** The sandbox's ledger of `user` in EUR: win movements (provider_tx_id, delta) and the balance. */
async function ledgerOf(user: string): Promise<{ wins: [string, number][]; balance: number }> {
  const res = await sbx.app.inject({ method: 'GET', url: `/_sandbox/ledger?user_id=${user}&currency=EUR` });
  const body = res.json() as {
    balance_minor: number;
    transactions: { kind: string; provider_tx_id: string; delta_minor: number }[];
  };
  return {
    wins: body.transactions.filter((t) => t.kind === 'win').map((t) => [t.provider_tx_id, t.delta_minor]),
    balance: body.balance_minor,
  };
}

describe("wins waiting for a retry when the operator's win path is back", () => {
  sagaPerDescribe();
  it('are credited within seconds of its first success, not at the next step, each once', async () => {
    // The win path answers 500 until told otherwise; the bet path is untouched.
    expect((await sbx.put('/_sandbox/faults', [{ kind: 'win', mode: 'error500' }])).status).toBe(200);
    const players = ['won-1', 'won-2', 'lost-1', 'lost-2'];
    const bets = players.map((_, i) => 50_000 + 4 * i);
    // Debits first: a bet is settled once its debit is confirmed, as settlement does.
    const contexts = await Promise.all(players.map((user) => env.session(user)));
    for (const [i, bet] of contexts.entries()) await env.append(bet, [betPlaced(bet, bets[i] as number)]);
    await waitFor(
      'the debits',
      async () => (bets.every((tx) => succeeded(tx)) ? true : undefined),
      20_000,
      25,
    );
    for (const [i, bet] of contexts.entries()) {
      const tx = bets[i] as number;
      await env.append(bet, [bet.user_id.startsWith('won') ? betWon(bet, tx, 2_500) : betLost(bet, tx)]);
    }
    // Every win and close fails at once and at its 500 ms retry, then waits for the 60 s step.
    await waitFor(
      'debits succeeded, wins and closes waiting for the second step',
      async () => {
        if (!bets.every((tx) => succeeded(tx))) return undefined;
        const pays = await Promise.all(bets.map((tx) => getCallback(env.sql, tx + 1)));
        return pays.every((p) => p?.status === 'due' && p.attempts === 2) ? pays : undefined;
      },
      20_000,
      50,
    ).catch(async (err) => {
      const pays = await Promise.all(bets.map((tx) => getCallback(env.sql, tx + 1)));
      throw new Error(
        `${(err as Error).message}: events ${JSON.stringify(env.events.map((e) => [e.type, e.value.tx_id]))}; callbacks ${JSON.stringify(pays.map((p) => p && [p.tx_id, p.status, p.attempts, p.last_answer, p.last_error]))}`,
      );
    });
    for (const tx of bets) {
      const p = await getCallback(env.sql, tx + 1);
      expect((p?.next_attempt_at ?? 0) - Date.now()).toBeGreaterThan(SECOND_STEP_MS - 10_000);
    }

    // The win path recovers; bets go on, and the next bet's win is the path's first success.
    expect((await sbx.put('/_sandbox/faults', [])).status).toBe(200);
    const next = await env.session('after');
    await env.append(next, [betPlaced(next, 50_100)]);
    await waitFor('its debit', async () => succeeded(50_100), 20_000, 25);
    await env.append(next, [betWon(next, 50_100, 2_000)]);
    const first = await waitFor('the first win after the outage', async () => succeeded(50_101), 20_000, 25);

    // Within seconds of it; without pulling forward they would wait out the 60 s step.
    let credited: ({ at: number; attempts: number } | undefined)[] = [];
    try {
      await waitFor(
        'the wins and closes of the outage credited',
        async () => {
          credited = bets.map((tx) => succeeded(tx + 1));
          return credited.every((c) => c) ? true : undefined;
        },
        20_000,
        25,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(credited)}; first success at ${first.at}`);
    }
    for (const c of credited) expect((c?.at ?? Number.POSITIVE_INFINITY) - first.at).toBeLessThan(5_000);
    // Each sent once more, as an attempt of its own: two failures, then the pulled-forward success.
    expect(credited.map((c) => c?.attempts)).toEqual(bets.map(() => 3));

    // Nothing paid twice: one success per callback on the log, one movement per win in the ledger.
    for (const tx of [...bets, 50_100])
      expect(eventsOf(env.events, 'CallbackSucceeded', tx + 1)).toHaveLength(1);
    const payId = (user: string) => String((bets[players.indexOf(user)] as number) + 1);
    for (const user of ['won-1', 'won-2'])
      expect(await ledgerOf(user)).toEqual({ wins: [[payId(user), 2_500]], balance: START - 1_000 + 2_500 });
    for (const user of ['lost-1', 'lost-2'])
      expect(await ledgerOf(user)).toEqual({ wins: [[payId(user), 0]], balance: START - 1_000 });
  });
});

describe('retries waiting when a probe closes the breaker of a wallet that was down', () => {
  sagaPerDescribe({ failures: 2, cooldownMs: 500, maxCooldownMs: 1_000 });

  it('are sent at once after the probe, with no other success from the operator', async () => {
    const winner = await env.session('down-winner');
    await env.append(winner, [betPlaced(winner, 60_000)]);
    await waitFor('the debit', async () => succeeded(60_000), 20_000, 25);
    // The whole wallet answers 500: the win fails, two debits fail (the breaker opens) and their
    // rollbacks fail too.
    expect((await sbx.put('/_sandbox/faults', [{ mode: 'error500' }])).status).toBe(200);
    await env.append(winner, [betWon(winner, 60_000, 2_500)]);
    for (const [i, user] of ['down-1', 'down-2'].entries()) {
      const bet = await env.session(user);
      await env.append(bet, [betPlaced(bet, 60_100 + 4 * i)]);
    }
    const retries = [60_001, 60_102, 60_106];
    await waitFor(
      'the breaker open, the win and the rollbacks waiting for the second step',
      async () => {
        if ((await readBreaker(env.sql, env.operatorId)).state !== 'open') return undefined;
        const rows = await Promise.all(retries.map((tx) => getCallback(env.sql, tx)));
        return rows.every((r) => r?.status === 'due' && r.attempts === 2) ? true : undefined;
      },
      20_000,
      50,
    );

    // The wallet is back; nothing but the breaker's balance probe reaches it.
    const back = Date.now();
    expect((await sbx.put('/_sandbox/faults', [])).status).toBe(200);
    await waitFor(
      'the breaker closed by its probe',
      async () => ((await readBreaker(env.sql, env.operatorId)).state === 'closed' ? true : undefined),
      20_000,
      25,
    );
    let done: ({ at: number; attempts: number } | undefined)[] = [];
    await waitFor(
      'the win and the rollbacks acknowledged',
      async () => {
        done = retries.map((tx) => succeeded(tx));
        return done.every((d) => d) ? true : undefined;
      },
      20_000,
      25,
    ).catch((err) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(done)}`);
    });
    for (const d of done) expect((d?.at ?? Number.POSITIVE_INFINITY) - back).toBeLessThan(10_000);
    expect(done.map((d) => d?.attempts)).toEqual([3, 3, 3]);
    // Credited once; the failed debits were never booked, their rollbacks moved nothing.
    expect(await ledgerOf('down-winner')).toEqual({
      wins: [['60001', 2_500]],
      balance: START - 1_000 + 2_500,
    });
    for (const user of ['down-1', 'down-2']) expect((await ledgerOf(user)).balance).toBe(START);
  });
});
