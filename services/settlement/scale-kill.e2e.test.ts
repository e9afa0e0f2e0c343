/**
 * fault row "SIGKILL of one of two settlement instances under load": two settlement
 * processes (`tsx services/settlement/main.ts`) share six wallet partitions while rounds finish
 * every 100 ms and debits keep arriving; one is killed with SIGKILL mid-flight. The survivor takes
 * its partitions over once the group drops it, and in the end every bet has exactly one BetSettled
 * on the log (counted per tx_id), none rejected or rolled back, and the outbox is empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleSum } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService } from '../../tests/support/processes.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  succeeded,
  T0,
  tallySettlements,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';

const PARTITIONS = 6;
const ROUNDS = 40;
const PER_ROUND = 40;
/** Rounds whose debits are confirmed only while the rounds flow (the wallet side under load too). */
const LIVE_DEBITS_FROM = 16;
let e: WalletTestEnv;
const children: Service[] = [];

const txOf = (r: number, i: number) => (r * 1000 + i) * 4;

beforeAll(async () => {
  e = await createWalletTestEnv('settlescale', { TOPIC_PARTITIONS: String(PARTITIONS) });
  for (let r = 1; r <= ROUNDS; r++)
    for (let i = 0; i < PER_ROUND; i++) {
      const tx = txOf(r, i);
      const b = placed(tx, 'wall-street', r, { user_id: `k-${i}`, placedAt: T0 + r * 10_000 });
      await e.append(b.value.bet, r < LIVE_DEBITS_FROM ? [b, succeeded(tx, 'bet', '50.00')] : [b]);
    }
}, 120_000);

afterAll(async () => {
  for (const c of children) await c.stop('SIGKILL');
  await e?.close();
});

const onLog = async () => tallySettlements(await e.readWallet());

/** Owner of each wallet partition in settlement_partitions, as the pid in the owner's name. */
async function ownerPids(): Promise<number[]> {
  const rows = await e.sql<{ owner: string }[]>`select owner from settlement_partitions order by "partition"`;
  return rows.map((r) => Number(r.owner.split(':')[1]));
}

describe('one of two settlement instances killed with SIGKILL under load', () => {
  it('moves its partitions to the other, and every bet is settled exactly once', async () => {
    const start = async () => {
      const port = await freePort();
      const child = startService('services/settlement/main.ts', {
        ...e.env,
        SETTLEMENT_HTTP_PORT: String(port),
        LOG_LEVEL: 'warn',
      });
      children.push(child);
      await waitFor('settlement ready', async () =>
        (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.ok ? true : undefined,
      );
      return { child, port };
    };
    /** Events a process appended, from its /metrics. */
    const appendedBy = async (port: number) =>
      sampleSum(
        await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
        'settlement_events_appended_total',
      );
    const { child: survivor, port: portA } = await start();
    const { child: victim, port: portB } = await start();
    const [pidA, pidB] = [survivor.child.pid, victim.child.pid];
    await waitFor(
      'the partitions split between the two processes',
      async () => {
        const pids = await ownerPids();
        return pids.length === PARTITIONS && pids.includes(pidA as number) && pids.includes(pidB as number)
          ? true
          : undefined;
      },
      30_000,
      200,
    );
    const victimPartitions = (await ownerPids()).flatMap((pid, p) => (pid === pidB ? [p] : []));

    let next = 1;
    let feeding = true;
    const feeder = (async () => {
      for (; feeding && next <= ROUNDS; next++) {
        if (next >= LIVE_DEBITS_FROM)
          for (let i = 0; i < PER_ROUND; i++) {
            const b = placed(txOf(next, i), 'wall-street', next, { user_id: `k-${i}` });
            await e.append(b.value.bet, [succeeded(txOf(next, i), 'bet', '50.00')]);
          }
        await e.appendRounds([
          round('wall-street', next, T0 + next * 10_000 + 5000, {
            game: 'wall-street',
            trending: next % 2 ? 'up' : 'down',
          }),
        ]);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await waitFor(
      'settlements from both processes',
      async () =>
        (await appendedBy(portA)) > 0 &&
        (await appendedBy(portB)) > 0 &&
        (await onLog()).settled.size >= 6 * PER_ROUND
          ? true
          : undefined,
      60_000,
      100,
    );
    await victim.stop('SIGKILL');
    const atKill = (await onLog()).settled.size;
    expect(atKill).toBeLessThan(ROUNDS * PER_ROUND);

    await waitFor(
      "the survivor to claim the victim's partitions",
      async () => ((await ownerPids()).every((pid) => pid === pidA) ? true : undefined),
      60_000,
      250,
    );
    await feeder;
    feeding = false;
    const all = await waitFor(
      'every bet settled',
      async () => {
        const got = await onLog();
        return got.settled.size >= ROUNDS * PER_ROUND ? got : undefined;
      },
      120_000,
      500,
    );
    await new Promise((r) => setTimeout(r, 2000)); // a late duplicate would show up here
    const final = await onLog();
    const doubled = [...final.settled].filter(([, n]) => n !== 1);
    expect(doubled).toEqual([]);
    expect(final.settled.size).toBe(ROUNDS * PER_ROUND);
    expect(final.other).toBe(0);
    expect(all.settled.size).toBe(ROUNDS * PER_ROUND);
    await waitFor('the outbox empty (every append read back)', async () => {
      const [{ n }] = (await e.sql`select count(*)::int as n from settlement_outbox`) as unknown as [
        { n: number },
      ];
      return n === 0 ? true : undefined;
    });
    console.info(
      `settlement scale-out kill: ${atKill} of ${ROUNDS * PER_ROUND} bets settled at the SIGKILL; partitions ${victimPartitions.join(',')} moved`,
    );
  }, 240_000);
});
