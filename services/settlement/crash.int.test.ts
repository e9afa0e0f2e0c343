/**
 * The settlement process (`tsx services/settlement/main.ts`) killed with SIGKILL while rounds keep
 * finishing, then restarted: every bet ends with exactly one BetSettled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService } from '../../tests/support/processes.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  succeeded,
  T0,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';

const ROUNDS = 30;
const PER_ROUND = 40;
let e: WalletTestEnv;
let child: Service | undefined;

beforeAll(async () => {
  e = await createWalletTestEnv('settlekill');
  for (let r = 1; r <= ROUNDS; r++) {
    for (let i = 0; i < PER_ROUND; i++) {
      const tx = (r * 1000 + i) * 4;
      const b = placed(tx, 'wall-street', r, { user_id: `p-${i}`, placedAt: T0 + r * 10_000 });
      await e.append(b.value.bet, [b, succeeded(tx, 'bet', '50.00')]);
    }
  }
}, 120_000);

afterAll(async () => {
  await child?.stop('SIGKILL');
  await e?.close();
});

const settledIds = async () =>
  (await e.readWallet()).filter((x) => x.type === 'BetSettled').map((x) => x.value.tx_id);

describe('settlement killed with SIGKILL mid-flight', () => {
  it('restarts from Postgres and appends exactly one BetSettled per bet', async () => {
    const port = await freePort();
    const start = () =>
      startService('services/settlement/main.ts', {
        ...e.env,
        SETTLEMENT_HTTP_PORT: String(port),
        LOG_LEVEL: 'warn',
      });
    child = start();
    await waitFor('settlement ready', async () =>
      (await fetch(`http://127.0.0.1:${port}/ready`)).ok ? true : undefined,
    );
    let next = 1;
    const finish = async (upTo: number) => {
      for (; next <= upTo; next++)
        await e.appendRounds([
          round('wall-street', next, T0 + next * 10_000 + 5000, {
            game: 'wall-street',
            trending: next % 2 ? 'up' : 'down',
          }),
        ]);
    };
    await finish(10);
    await waitFor(
      'first settlements',
      async () => ((await settledIds()).length > 0 ? true : undefined),
      30_000,
      100,
    );
    await child.stop('SIGKILL');
    const atKill = (await settledIds()).length;
    expect(atKill).toBeLessThan(ROUNDS * PER_ROUND);
    await finish(20); // rounds keep finishing while it is down
    child = start();
    await finish(ROUNDS);
    const ids = await waitFor(
      'every bet settled',
      async () => {
        const got = await settledIds();
        return got.length >= ROUNDS * PER_ROUND ? got : undefined;
      },
      90_000,
      500,
    );
    await new Promise((r) => setTimeout(r, 2000)); // a late duplicate would show up here
    const final = await settledIds();
    expect(final).toHaveLength(ROUNDS * PER_ROUND);
    expect(new Set(final).size).toBe(ROUNDS * PER_ROUND);
    expect(ids.length).toBe(ROUNDS * PER_ROUND);
    const [{ n }] = (await e.sql`select count(*)::int as n from settlement_outbox`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  }, 180_000);
});
