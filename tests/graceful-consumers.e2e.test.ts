/**
 * Graceful stop of the consumers, each as a real process given work and sent
 * SIGTERM in the middle of it: it exits 0 within SHUTDOWN_TIMEOUT_MS, leaves nothing half-written,
 * its committed position covers what it processed, and a restart re-delivers no completed work
 * beyond the documented at-least-once window. The wallet saga's part is in
 * graceful-saga.e2e.test.ts. Shared broker and database, namespaces of their own.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { partitionOffsets } from '../lib/log/kafka.ts';
import {
  appendLoad,
  behind,
  createLoadEnv,
  type Load,
  type LoadEnv,
  readModelProblems,
  rowCounts,
} from './support/load.ts';
import { waitFor } from './support/poll.ts';
import { freePort, type Service, startService, timedStop, waitReady } from './support/processes.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  succeeded,
  T0,
  type WalletTestEnv,
} from './support/settlement.ts';

const BOUND_MS = 15_000;
const started: Service[] = [];
const start = (entry: string, env: Record<string, string>) => {
  const s = startService(entry, { ...env, SHUTDOWN_TIMEOUT_MS: String(BOUND_MS), LOG_LEVEL: 'warn' });
  started.push(s);
  return s;
};
/** SIGTERM (SIGKILL 10 s past the bound), then the exit code and how long the stop took (ms). */
const terminate = (s: Service) => timedStop(s, BOUND_MS + 10_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
});

describe('projector process (rounds, wallet and auth-keys projections) on SIGTERM mid-replay', () => {
  const LOAD: Load = { roundsPerGame: 4000, bets: 8000, keys: 10_000 };
  let e: LoadEnv | undefined;
  afterAll(async () => {
    await e?.close();
  });

  it('stops after the writes in progress with its group offsets at its checkpoints, and resumes exactly', async () => {
    e = await createLoadEnv('graceful');
    await appendLoad(e, LOAD);
    const env = { ...e.env, PROJECTOR_PORT: '0' };
    let child = start('services/projector/main.ts', env);
    await waitFor(
      'a first write',
      async () => ((await rowCounts(e as LoadEnv)).rounds > 0 ? true : undefined),
      60_000,
      10,
    );
    const { code, ms } = await terminate(child);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(BOUND_MS);
    expect((await behind(e)).length).toBeGreaterThan(0); // stopped mid-replay

    // Nothing half-written: the rows are exactly the records below the checkpoints (every sample
    // record is a distinct valid round), and the group's Kafka offsets were committed up to them.
    const cps = await e.sql<{ projection: string; topic: string; partition: number; offset: string }[]>`
      select projection, topic, "partition", "offset"::text as "offset" from projection_checkpoints`;
    const lows = await partitionOffsets(e.kafka, e.topic);
    const below = cps
      .filter((c) => c.topic === e?.topic)
      .reduce((n, c) => n + Number(BigInt(c.offset) - (lows.get(c.partition)?.low ?? 0n)), 0);
    expect((await rowCounts(e)).rounds).toBe(below);
    const admin = e.kafka.admin();
    await admin.connect();
    try {
      for (const [groupId, topic, projection] of [
        [e.config.projector.group, e.topic, 'rounds'],
        [`${e.config.projector.group}-wallet`, e.walletTopic, 'wallet'],
      ] as const) {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        for (const c of cps.filter((x) => x.projection === projection))
          expect(
            committed?.partitions.find((p) => p.partition === c.partition)?.offset,
            `${projection} ${c.partition}`,
          ).toBe(c.offset);
      }
    } finally {
      await admin.disconnect();
    }

    child = start('services/projector/main.ts', env);
    await waitFor(
      'caught up',
      async () => ((await behind(e as LoadEnv)).length === 0 ? true : undefined),
      120_000,
      100,
    );
    expect(await readModelProblems(e, LOAD)).toEqual([]);
    const last = await terminate(child);
    expect(last.code).toBe(0);
    console.info(
      `graceful projector: SIGTERM mid-replay took ${Math.round(ms)} ms, when idle ${Math.round(last.ms)} ms`,
    );
  }, 240_000);
});

describe('settlement process on SIGTERM while it settles', () => {
  const ROUNDS = 20;
  const PER_ROUND = 40;
  let e: WalletTestEnv | undefined;
  afterAll(async () => {
    await e?.close();
  });

  it('leaves every settled bet on the log or in its outbox, and a restart settles each bet once', async () => {
    e = await createWalletTestEnv('gracefulsettle');
    const w = e;
    for (let r = 1; r <= ROUNDS; r++)
      for (let i = 0; i < PER_ROUND; i++) {
        const tx = (r * 1000 + i) * 4;
        const b = placed(tx, 'wall-street', r, { user_id: `g-${i}`, placedAt: T0 + r * 10_000 });
        await w.append(b.value.bet, [b, succeeded(tx, 'bet', '50.00')]);
      }
    const port = await freePort();
    const env = { ...w.env, SETTLEMENT_HTTP_PORT: String(port) };
    let child = start('services/settlement/main.ts', env);
    await waitReady(`http://127.0.0.1:${port}/ready`);
    const finish = (from: number, to: number) =>
      w.appendRounds(
        Array.from({ length: to - from + 1 }, (_, k) =>
          round('wall-street', from + k, T0 + (from + k) * 10_000 + 5000, {
            game: 'wall-street',
            trending: 'up',
          }),
        ),
      );
    // Rounds keep finishing, one every 150 ms, until after the SIGTERM.
    let next = 1;
    let feeding = true;
    const feeder = (async () => {
      for (; feeding && next <= ROUNDS; next++) {
        await finish(next, next);
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
    const settled = async () =>
      (await w.readWallet()).filter((x) => x.type === 'BetSettled').map((x) => x.value.tx_id);
    await waitFor(
      'first settlements',
      async () => ((await settled()).length > 0 ? true : undefined),
      30_000,
      20,
    );
    const { code, ms } = await terminate(child);
    feeding = false;
    await feeder;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(BOUND_MS);

    const onLog = new Set(await settled());
    const rows = await w.sql<
      { tx_id: string; status: string }[]
    >`select tx_id::text, status from settlement_bets`;
    const outbox = new Set(
      (
        await w.sql<{ tx_id: string }[]>`select tx_id::text from settlement_outbox where type = 'BetSettled'`
      ).map((o) => Number(o.tx_id)),
    );
    const done = rows.filter((r) => r.status === 'settled').map((r) => Number(r.tx_id));
    expect(done.length).toBeLessThan(ROUNDS * PER_ROUND); // stopped mid-work
    expect(done.filter((tx) => !onLog.has(tx) && !outbox.has(tx))).toEqual([]);

    child = start('services/settlement/main.ts', env);
    if (next <= ROUNDS) await finish(next, ROUNDS);
    const all = await waitFor(
      'every bet settled',
      async () => {
        const ids = await settled();
        return ids.length >= ROUNDS * PER_ROUND ? ids : undefined;
      },
      90_000,
      250,
    );
    await new Promise((r) => setTimeout(r, 1500)); // a late duplicate would show up here
    expect(await settled()).toHaveLength(all.length);
    expect(new Set(all).size).toBe(ROUNDS * PER_ROUND);
    expect((await terminate(child)).code).toBe(0);
    console.info(
      `graceful settlement: SIGTERM took ${Math.round(ms)} ms with ${done.length} bets settled and ${outbox.size} in the outbox`,
    );
  }, 240_000);
});
