/**
 * Settlement against odd records appended straight to a real `rounds` topic
 * (tests/support/odd-rounds.ts): the bets of the engine's rounds after a slot round 4 ids ahead of
 * the engine finished 10 minutes in the future (with another result), a round from year 0, a
 * duplicate, a conflicting duplicate and a round of a lower id, are each settled once, with the
 * engine's result; the refused records are counted by reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletEvent } from '../../lib/log/wallet-events.ts';
import { createLogger } from '../../lib/logger.ts';
import { oddScenario } from '../../tests/support/odd-rounds.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createWalletTestEnv,
  placed,
  succeeded,
  T0,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';
import { buildSettlement, type Settlement } from './settlement.ts';

let e: WalletTestEnv;
let s: Settlement | undefined;
const logger = createLogger('t', 'silent');

beforeAll(async () => {
  e = await createWalletTestEnv('oddsettle', { TOPIC_PARTITIONS: '2' });
  s = buildSettlement({ ...e, logger, now: () => T0 + 60_000 });
  await s.start();
});
afterAll(async () => {
  await s?.stop();
  await e?.close();
});

const settled = (events: WalletEvent[]) =>
  events
    .filter((x) => x.type === 'BetSettled')
    .map((x) => {
      const v = x.value as unknown as { tx_id: number; outcome: string; payout_minor: number };
      return [v.tx_id, v.outcome, v.payout_minor] as const;
    })
    .sort((a, b) => a[0] - b[0]);

describe('settlement survives odd records of rounds', () => {
  it('settles the bets of every engine round after them once, with the engine’s result', async () => {
    const sc = oddScenario('slot', 400);
    // One 10.00 bet, debited, on each of the engine's rounds after the odd records (403 … 408; the
    // one from the future has id 406) and on the out-of-order round (395).
    const seqs = [403, 404, 405, 406, 407, 408, 395];
    for (const seq of seqs) {
      const b = placed(10_000 + seq * 4, 'slot', seq);
      await e.append(b.value.bet, [b, succeeded(b.value.tx_id, 'bet', '90.00')]);
    }
    await e.appendRoundEvents(sc.all);
    const got = await waitFor(
      'a BetSettled for every bet',
      async () => {
        const all = settled(await e.readWallet());
        return all.length >= seqs.length ? all : undefined;
      },
      30_000,
      300,
    );
    // sampleRound's slot multiplier is `seq % 10`; the round from the future said 999.00.
    expect(got).toEqual(
      [...seqs]
        .sort((a, b) => a - b)
        .map((seq) => [10_000 + seq * 4, seq % 10 === 0 ? 'lost' : 'won', (seq % 10) * 1000] as const),
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(settled(await e.readWallet())).toHaveLength(seqs.length);
    const refused = async (reason: string) =>
      (await s?.metrics.registry.getSingleMetric('settlement_refused_rounds_total')?.get())?.values.find(
        (v) => v.labels.reason === reason,
      )?.value;
    expect(await refused('future')).toBe(1);
    expect(await refused('past')).toBe(1);
    expect(await refused('conflict')).toBeGreaterThanOrEqual(1);
  });
});
