/**
 * A Postgres outage during a replay, simulated by a TCP proxy between the projector and the
 * real Postgres that the test closes (every connection cut, new ones refused) and reopens:
 * /ready is 503 before the consumer joins and while the database is unreachable, 200 otherwise;
 * records appended during an outage show as kafka_consumer_lag on /metrics; the read model ends
 * with every round exactly once.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { sampleSum, sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createTestEnv,
  produceAll,
  roundMessage,
  sampleRounds,
  TcpProxy,
  type TestEnv,
} from '../../tests/support/projector.ts';
import { buildRoundsProjector, type RoundsProjector } from './projector.ts';

let e: TestEnv;
let proxy: TcpProxy;
let projectorSql: Sql;
let projector: RoundsProjector;
let ops: { server: Server; port: number };

beforeAll(async () => {
  e = await createTestEnv('outage');
  const url = new URL(e.config.db.url);
  proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  await proxy.open();
  url.port = String(proxy.port);
  // A short lag refresh, so records appended during the outage show on /metrics quickly.
  const config = loadConfig(process.env, {
    ...e.env,
    DATABASE_URL: url.toString(),
    KAFKA_LAG_REFRESH_MS: 200,
  });
  projectorSql = createSql(config, { max: 2 });
  projector = buildRoundsProjector({
    config,
    kafka: e.kafka,
    sql: projectorSql,
    logger: createLogger('test', 'silent'),
    // Small chunks make the replay many transactions long, so the outages land in the middle of it.
    options: { chunkSize: 250, retryMinMs: 50, retryMaxMs: 400, probeIntervalMs: 300 },
  });
  ops = await startOpsServerFor(projector, '127.0.0.1', 0);
});

afterAll(async () => {
  ops?.server.close();
  await projector?.stop();
  await projectorSql?.end({ timeout: 1 });
  await proxy?.close();
  await e?.close();
});

async function rowCount(): Promise<number> {
  const [r] = await e.sql<{ n: number }[]>`select count(*)::int as n from rounds`;
  return r?.n ?? 0;
}

const readyStatus = async () => (await fetch(`http://127.0.0.1:${ops.port}/ready`)).status;
const metricsText = async () => (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
/** Sum of the rounds projector's kafka_consumer_lag over the partitions. */
const totalLag = async () =>
  sampleSum(await metricsText(), 'kafka_consumer_lag', { consumer: 'projector-rounds', topic: e.topic });

describe('Postgres outage during a replay', () => {
  it('pauses, reports not ready, and resumes from its checkpoint with no loss and no duplicate', async () => {
    // Four portions of rounds (seq ranges per game); each outage starts while one is being projected.
    const perPortion = 600;
    const portion = (k: number) =>
      sampleRounds(perPortion * (k + 1))
        .slice(perPortion * k * 4)
        .map(roundMessage);
    expect(await readyStatus()).toBe(503); // not in its group yet
    await projector.start();
    expect(await readyStatus()).toBe(200);

    for (let outage = 0; outage < 3; outage++) {
      const before = await rowCount();
      await produceAll(e.producer, e.topic, portion(outage));
      await waitFor(
        'progress before the outage',
        async () => ((await rowCount()) > before ? true : undefined),
        30_000,
        5,
      );
      await proxy.close();
      await waitFor(
        '/ready to turn 503',
        async () => ((await readyStatus()) === 503 ? true : undefined),
        15_000,
        50,
      );
      // /ready says why it waits.
      expect(projector.status()).toEqual({
        consumer: true,
        database: false,
        waiting: expect.stringMatching(/^postgres: /),
      });
      // A commit Postgres had already received when the connections were cut still lands (on a
      // loaded machine, after /ready turned 503): count once that has settled, two reads apart agreeing.
      let during = await rowCount();
      for (let settled = false; !settled; ) {
        await new Promise((r) => setTimeout(r, 300));
        const now = await rowCount();
        settled = now === during;
        during = now;
      }
      // Records appended while the database is away are projected once it is back.
      if (outage === 2) {
        await produceAll(e.producer, e.topic, portion(3));
        const lag = await waitFor('lag on /metrics during the outage', async () => {
          const n = await totalLag();
          return n >= perPortion * 4 ? n : undefined;
        });
        expect(lag).toBeGreaterThanOrEqual(perPortion * 4); // at least the portion appended while away
      }
      await new Promise((r) => setTimeout(r, 800));
      expect(await rowCount()).toBe(during); // nothing is written, and nothing is skipped past, while it is away
      await proxy.open();
      await waitFor(
        '/ready to turn 200',
        async () => ((await readyStatus()) === 200 ? true : undefined),
        15_000,
        50,
      );
    }

    const perGame = perPortion * 4;
    const total = perGame * 4;
    const high = await partitionOffsets(e.kafka, e.topic);
    expect([...high.values()].reduce((n, o) => n + o.high, 0n)).toBe(BigInt(total));
    await waitFor(
      'every record projected',
      async () => ((await rowCount()) === total ? true : undefined),
      60_000,
      50,
    );
    const cps = await e.sql<{ partition: number; offset: string }[]>`
      select "partition", "offset"::text as "offset" from projection_checkpoints`;
    for (const [p, o] of high)
      if (o.high > 0n) expect(cps.find((c) => c.partition === p)?.offset).toBe(String(o.high));

    const [all] = await e.sql<{ n: number; d: number }[]>`
      select count(*)::int as n, count(distinct (game_id, round_id))::int as d from rounds`;
    expect(all).toEqual({ n: total, d: total });
    const spans = await e.sql<{ n: number; span: number }[]>`
      select count(*)::int as n, (max(round_id) - min(round_id) + 1)::int as span from rounds group by game_id`;
    expect(spans).toHaveLength(4);
    for (const s of spans) expect(s).toEqual({ n: perGame, span: perGame });

    expect(projector.ready()).toBe(true);
    const metrics = await metricsText();
    expect(sampleSum(metrics, 'projector_db_failures_total')).toBeGreaterThan(0);
    await waitFor('lag 0 once every record is projected', async () =>
      (await totalLag()) === 0 ? true : undefined,
    );
    const lag0 = { consumer: 'projector-rounds', topic: e.topic, partition: '0' };
    expect(sampleValue(await metricsText(), 'kafka_consumer_lag', lag0)).toBe(0);
    expect((await fetch(`http://127.0.0.1:${ops.port}/health`)).status).toBe(200);
  }, 120_000);
});
