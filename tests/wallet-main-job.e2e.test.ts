/**
 * The main job includes wallets: the whole stack as real processes with
 * the operator sandbox registered as the operator, the settlement processor, the wallet saga and
 * services/bots (simulated players betting through request-access, /play/open and /play/bets on
 * every game, one of them in a demo session), as `npm start` runs them. Bets are placed, won bets
 * are credited through the saga, and once the bots stop the sandbox ledger and the read models
 * reconcile: agreed and settled, each player's projected balance equal to the operator's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackWithWallet, startStack } from './browser/stack.ts';
import { waitFor } from './support/poll.ts';
import { balanceRow, expectSettled } from './support/wallet-faults.ts';
import { ledger } from './support/wallet-players.ts';

/** Bot i plays GAME_SLUGS[i % 4]; bot-3 (i = 2, slot) is the demo one (services/bots/bots.ts). */
const PLAYERS = 4;
const REAL_BOTS = ['bot-1', 'bot-2', 'bot-4'];
const DEMO_BOT = 'bot-3';

let stack: StackWithWallet;

beforeAll(async () => {
  stack = await startStack({ wallet: true, roundSpeed: 10, bots: { players: PLAYERS, betIntervalMs: 300 } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

interface Count {
  bets: number;
  won: number;
  credited: number;
  /** Lost bets whose round close the operator acknowledged. */
  closed: number;
}

async function counts(): Promise<Count> {
  const [c] = await stack.wallet.sql<{ bets: string; won: string; credited: string; closed: string }[]>`
    select count(*) filter (where kind = 'bet') as bets,
           count(*) filter (where kind = 'bet' and round_status = 'won') as won,
           count(*) filter (where kind = 'win' and status = 'succeeded') as credited,
           count(*) filter (where kind = 'close' and status = 'succeeded') as closed
    from wallet_transactions where not demo`;
  return {
    bets: Number(c?.bets),
    won: Number(c?.won),
    credited: Number(c?.credited),
    closed: Number(c?.closed),
  };
}

describe('main job with wallets', () => {
  it('bots bet through the saga, wins are credited, and the ledger reconciles', async () => {
    const seen = await waitFor(
      'bot bets placed and wins credited through the saga',
      async () => {
        const c = await counts();
        return c.bets >= 20 && c.credited >= 3 ? c : undefined;
      },
      120_000,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${stack.logs()}`);
    });
    await stack.stopOne('bots');

    // The reconciliation settled after the bots stopped: agreed, nothing mismatched or unknown.
    const last = await expectSettled(stack, [], 90_000);
    const final = await counts();
    expect(last.bets).toBe(final.bets);
    expect(final.credited).toBe(final.won);

    // Every real bot has an account at the operator whose balance the read model shows, and its
    // wins are there as credits; the demo bot never reached the operator.
    let credits = 0;
    let closes = 0;
    for (const user of REAL_BOTS) {
      const l = await ledger(stack.wallet.sandboxUrl, user);
      expect(l.status).toBe(200);
      expect(await balanceRow(stack, user)).toBe(l.body.balance);
      credits += l.body.transactions.filter((t) => t.kind === 'win' && t.delta_minor > 0).length;
      closes += l.body.transactions.filter((t) => t.kind === 'win' && t.delta_minor === 0).length;
    }
    expect(credits).toBe(final.credited);
    // Every lost bet closed its round at the operator with a zero-amount win.
    expect(closes).toBe(final.closed);
    expect((await ledger(stack.wallet.sandboxUrl, DEMO_BOT)).status).toBe(404);
    const [demo] = await stack.wallet.sql<{ n: string }[]>`
      select count(*) as n from wallet_transactions where user_id = ${DEMO_BOT} and demo and kind = 'bet'`;
    expect(Number(demo?.n)).toBeGreaterThan(0);
    console.log(
      `main job: ${seen.bets} real bets and ${seen.credited} credited wins when the bots were stopped; ` +
        `${final.bets} bets, ${final.won} won, ${final.credited} credited at the end`,
    );
  }, 240_000);
});
