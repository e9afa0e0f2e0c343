/**
 * Free bets given back on the real broker and Postgres: a rejected free bet's
 * grant gets its free bet back once, whatever is read twice; other rejections change nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
} from '../../../lib/log/checkpointed-consumer.ts';
import type { WalletEvent } from '../../../lib/log/wallet-events.ts';
import { createLogger } from '../../../lib/logger.ts';
import { waitFor } from '../../../tests/support/poll.ts';
import {
  type SagaEnv,
  startSagaEnv,
  startTestOperator,
  type TestOperator,
} from '../../../tests/support/wallet-saga.ts';
import { freeBetReturnsSpec } from './free-bet-returns.ts';

let op: TestOperator;
let env: SagaEnv;
let returned = 0;
const consumer = (): CheckpointedConsumer =>
  buildCheckpointedConsumer(
    freeBetReturnsSpec((n) => {
      returned += n;
    }),
    {
      config: env.config,
      kafka: env.kafka,
      sql: env.sql,
      logger: createLogger('free-bets', 'silent'),
      groupId: `${env.config.kafka.topicNamespace}free-bets`,
      maxWaitTimeInMs: 50,
      commitOffsets: true,
    },
  );

beforeAll(async () => {
  op = await startTestOperator();
  env = await startSagaEnv(op);
});
afterAll(async () => {
  await env?.close();
  await op?.close();
});

const rejected = (tx: number): WalletEvent => ({
  type: 'BetRejected',
  value: { tx_id: tx, code: 'PLAYER_BLOCKED', reason: 'refused', at: Date.now() },
});

it('gives a rejected free bet back to its grant once, and nothing for other rejections', async () => {
  const bet = await env.session('free-player');
  const [g] = await env.sql<{ grant_id: string }[]>`
    insert into free_bets (operator_id, user_id, game, currency, value_minor, quantity, quantity_left, expires_at)
    values (${env.operatorId}, 'free-player', 'crash', 'EUR', 500, 3, 1, now() + interval '1 day')
    returning grant_id::text`;
  const grant = g?.grant_id ?? '';
  // Two of its three free bets were redeemed by bets 500 and 504; bet 508 was a real-money bet.
  await env.sql`insert into free_bet_redemptions (tx_id, grant_id) values (500, ${grant}), (504, ${grant})`;
  const left = async () =>
    Number(
      (await env.sql<{ n: number }[]>`select quantity_left as n from free_bets where grant_id = ${grant}`)[0]
        ?.n,
    );
  const c1 = consumer();
  await c1.start();
  try {
    await env.append(bet, [rejected(500), rejected(508), rejected(500)]);
    // The count comes after the commit (afterCommit), so after the row changes: wait for both.
    await waitFor(
      'the free bet back, and counted',
      async () => ((await left()) === 2 && returned === 1 ? true : undefined),
      20_000,
      50,
    );
  } finally {
    await c1.stop();
  }
  // Read again from the start by a new consumer of the same checkpoint: nothing more.
  const c2 = consumer();
  await c2.start();
  try {
    await env.append(bet, [rejected(504)]);
    await waitFor(
      'the second one back, and counted',
      async () => ((await left()) === 3 && returned === 2 ? true : undefined),
      20_000,
      50,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await left()).toBe(3);
  } finally {
    await c2.stop();
  }
  expect(returned).toBe(2);
  const rows = await env.sql<{ tx_id: string; returned: boolean }[]>`
    select tx_id::text, returned_at is not null as returned from free_bet_redemptions order by tx_id`;
  expect(rows).toEqual([
    { tx_id: '500', returned: true },
    { tx_id: '504', returned: true },
  ]);
});
