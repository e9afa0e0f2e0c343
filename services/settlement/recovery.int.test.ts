/**
 * Outbox recovery on a real broker and Postgres: of two committed outbox entries, the one already
 * in wallet-transactions is not appended again, the missing one is appended once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEvent, type WalletEvent, walletKey } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { createWalletTestEnv, placed, T0, type WalletTestEnv } from '../../tests/support/settlement.ts';
import { recoverOutbox } from './recovery.ts';

let e: WalletTestEnv;
beforeAll(async () => {
  e = await createWalletTestEnv('recover');
});
afterAll(async () => {
  await e?.close();
});

const settled = (txId: number): WalletEvent => {
  const b = placed(txId, 'slot', 1).value;
  return {
    type: 'BetSettled',
    value: { tx_id: txId, bet: b.bet, outcome: 'lost', payout_minor: 0, win_tx_id: null, at: T0 },
  };
};

describe('settlement outbox recovery', () => {
  it('appends only the entries not found after the checkpoint', async () => {
    const inLog = settled(4000);
    const lost = settled(4004);
    await e.append(placed(4000, 'slot', 1).value.bet, [inLog]);
    for (const ev of [inLog, lost]) {
      const key = walletKey((ev.value as { bet: { operator_id: string; user_id: string } }).bet);
      await e.sql`insert into settlement_outbox (type, tx_id, key, value)
        values (${ev.type}, ${ev.value.tx_id}, ${key}, ${encodeEvent(ev)})`;
    }
    const producer = e.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const appended = await recoverOutbox({
      sql: e.sql,
      kafka: e.kafka,
      producer,
      walletTopic: e.walletTopic,
      log: createLogger('t', 'silent'),
    });
    await producer.disconnect();
    expect(appended).toBe(1);
    const ids = (await e.readWallet()).map((x) => x.value.tx_id).sort();
    expect(ids).toEqual([4000, 4004]);
    const left = await e.sql<{ tx_id: string }[]>`select tx_id::text from settlement_outbox`;
    expect(left.map((r) => r.tx_id)).toEqual(['4004']); // until the consumer reads it back
  });
});
