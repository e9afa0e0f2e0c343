/**
 * Exactly one RollbackRequested for a bet that settlement cancels after (or before) its debit is
 * confirmed, with the wallet saga and settlement both running on the real broker and Postgres (the
 * drill's tx 658 of bet 656: the debit's confirmation came after settlement's BetRejected, and the
 * saga and settlement each appended a RollbackRequested). The bet's process manager
 * (rules/wallet/process.ts) is the one owner of that decision (docs/decisions/money/0001-process-manager-per-bet.md). Bets are late by the rule of rounds without lifecycle records: placed at or after
 * their round's finished_at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import type { BetContext, WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { buildSettlement, type Settlement } from '../../services/settlement/settlement.ts';
import type { WalletSaga } from '../../services/wallet-saga/saga.ts';
import { waitFor } from '../support/poll.ts';
import { round } from '../support/settlement.ts';
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
let settlement: Settlement;
const CRASH_ROUND = 1_000_000_000_000; // crash's game id × 10¹²

beforeAll(async () => {
  op = await startTestOperator();
  env = await startSagaEnv(op);
  const admin = env.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, env.config, ['rounds', 'roundsDeadLetter']);
  await admin.disconnect();
  saga = await startedSaga(sagaOver(env));
  settlement = buildSettlement({
    config: {
      ...env.config,
      settlement: { ...env.config.settlement, group: `${env.config.kafka.topicNamespace}settlement` },
    },
    kafka: env.kafka,
    sql: env.sql,
    logger: createLogger('settlement', 'silent'),
  });
  await settlement.start();
  await waitFor('settlement ready', () => (settlement.ready() ? true : undefined), 30_000, 50);
});
afterAll(async () => {
  await settlement?.stop();
  await saga?.stop();
  await env?.close();
  await op?.close();
});

async function finishRound(seq: number, finishedAt: number): Promise<void> {
  await env.producer.send({
    topic: topicName(env.config, 'rounds'),
    acks: -1,
    messages: [
      { key: 'crash', value: encodeRound(round('crash', seq, finishedAt, { game: 'crash', point: '1.50' })) },
    ],
  });
}

/** BetPlaced of `bet` as `tx`, placed at `at` (Unix ms). */
const placedAt = (bet: BetContext, tx: number, at: number): WalletEvent => {
  const e = betPlaced(bet, tx);
  return e.type === 'BetPlaced' ? { type: 'BetPlaced', value: { ...e.value, placed_at: at } } : e;
};

/** Waits for the bet's rollback at the operator, then long enough for a second decision to show. */
async function settledRollbacks(tx: number): Promise<{ requested: number; refunds: number }> {
  await waitFor(
    'the rollback acknowledged',
    () =>
      env.events.some(
        (e) => e.type === 'CallbackSucceeded' && e.value.kind === 'rollback' && e.value.bet_tx_id === tx,
      )
        ? true
        : undefined,
    30_000,
    50,
  );
  await new Promise((r) => setTimeout(r, 2000));
  return {
    requested: eventsOf(env.events, 'RollbackRequested', tx + 2).length,
    refunds: op.movements.filter((m) => m.kind === 'rollback' && m.txId === String(tx + 2)).length,
  };
}

describe('one rollback decision per bet, the saga and settlement both running', () => {
  it('debit confirmed after settlement cancelled the bet (the drill): one RollbackRequested, one refund', async () => {
    const finishedAt = Date.now() - 10_000;
    const bet = await env.session('confirmed-late', { round_id: CRASH_ROUND + 11 });
    // The operator answers the debit after settlement has cancelled the bet (under the 2 s timeout).
    op.fault('confirmed-late', 'bet', () => ({ delayMs: 1500 }));
    await finishRound(11, finishedAt);
    const tx = 9000;
    await env.append(bet, [placedAt(bet, tx, finishedAt)]);
    await waitFor(
      'settlement cancelled it before the debit was confirmed',
      () => {
        const i = env.events.findIndex((e) => e.type === 'BetRejected' && e.value.tx_id === tx);
        const j = env.events.findIndex(
          (e) => e.type === 'CallbackSucceeded' && e.value.kind === 'bet' && e.value.bet_tx_id === tx,
        );
        return i >= 0 && j > i ? true : undefined;
      },
      20_000,
      50,
    );
    expect(await settledRollbacks(tx)).toEqual({ requested: 1, refunds: 1 });
    expect(op.balance('confirmed-late')).toBe(100_000);
  });

  it('debit confirmed before settlement cancelled the bet: one RollbackRequested, one refund', async () => {
    const finishedAt = Date.now() - 10_000;
    const bet = await env.session('confirmed-early', { round_id: CRASH_ROUND + 12 });
    const tx = 9004;
    await env.append(bet, [placedAt(bet, tx, finishedAt)]);
    await waitFor(
      'the debit confirmed',
      () =>
        env.events.some(
          (e) => e.type === 'CallbackSucceeded' && e.value.kind === 'bet' && e.value.bet_tx_id === tx,
        )
          ? true
          : undefined,
      20_000,
      50,
    );
    await finishRound(12, finishedAt);
    expect(await settledRollbacks(tx)).toEqual({ requested: 1, refunds: 1 });
    expect(op.balance('confirmed-early')).toBe(100_000);
  });
});
