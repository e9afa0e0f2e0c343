/**
 * Settlement's /health, /ready and /metrics against the real broker and Postgres (reached through
 * a TCP proxy the test cuts): /ready is 503 before the consumer joins and while Postgres is
 * unreachable; kafka_consumer_lag{consumer="settlement"} is 0 on every partition of both topics
 * once caught up, counts the records appended during the outage, and is 0 again after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import type { OpsServer } from '../../lib/http/ops.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { sampleSum, samplesOf, sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { TcpProxy } from '../../tests/support/projector.ts';
import {
  createWalletTestEnv,
  placed,
  round,
  T0,
  type WalletTestEnv,
} from '../../tests/support/settlement.ts';
import { buildSettlement, type Settlement } from './settlement.ts';

let e: WalletTestEnv;
let proxy: TcpProxy;
let sql: Sql;
let settlement: Settlement;
let ops: OpsServer;
const url = (path: string) => `http://127.0.0.1:${ops.port}${path}`;
const scrape = async () => (await fetch(url('/metrics'))).text();
const readyStatus = async () => (await fetch(url('/ready'))).status;
const lagSum = async () => sampleSum(await scrape(), 'kafka_consumer_lag', { consumer: 'settlement' });

beforeAll(async () => {
  e = await createWalletTestEnv('sops', { KAFKA_LAG_REFRESH_MS: '200' });
  const db = new URL(e.config.db.url);
  proxy = new TcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
  await proxy.open();
  db.port = String(proxy.port);
  const config = loadConfig(process.env, { ...e.env, DATABASE_URL: db.toString() });
  sql = createSql(config, { max: 2 });
  settlement = buildSettlement({ config, kafka: e.kafka, sql, logger: createLogger('test', 'silent') });
  ops = await startOpsServerFor(settlement, '127.0.0.1', 0);
});

afterAll(async () => {
  await ops?.close();
  await settlement?.stop();
  await sql?.end({ timeout: 1 });
  await proxy?.close();
  await e?.close();
});

describe('settlement ops endpoints', () => {
  it('reports readiness and consumer lag through a Postgres outage', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    expect(await readyStatus()).toBe(503); // not in its group yet
    await settlement.start();
    await waitFor('/ready 200', async () => ((await readyStatus()) === 200 ? true : undefined));

    const bet = placed(100, 'crash', 5);
    await e.append(bet.value.bet, [bet]);
    await e.appendRounds([round('crash', 5, T0 + 1000, { game: 'crash', point: '3.00' })]);
    const partitions = e.config.kafka.partitions;
    // The BetPlaced (and any event settlement appended and read back).
    const processed = { topic: e.walletTopic, result: 'processed' };
    // Lag reads 0 until the tracker sees the new high-water marks: wait for the record's processing too.
    const text = await waitFor('lag 0 on every partition of both topics', async () => {
      const t = await scrape();
      const s = samplesOf(t, 'kafka_consumer_lag', { consumer: 'settlement' });
      const seen = sampleValue(t, 'settlement_records_total', processed) !== undefined;
      return seen && s.length === 2 * partitions && s.every((x) => x.value === 0) ? t : undefined;
    });
    expect(sampleValue(text, 'settlement_records_total', processed)).toBeGreaterThanOrEqual(1);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'settlement' })).toBeGreaterThan(0);

    await proxy.close();
    const later = placed(103, 'double', 9);
    await e.append(later.value.bet, [later]);
    await waitFor('/ready 503 while Postgres is away', async () =>
      (await readyStatus()) === 503 ? true : undefined,
    );
    expect(await (await fetch(url('/ready'))).json()).toMatchObject({ ready: false, database: false });
    // At least the BetPlaced appended while Postgres is away (and whatever settlement appended just before).
    const behind = await waitFor('the unprocessed record as lag', async () => {
      const n = await lagSum();
      return n >= 1 ? n : undefined;
    });
    expect(behind).toBeGreaterThanOrEqual(1);

    await proxy.open();
    await waitFor('/ready 200 again', async () => ((await readyStatus()) === 200 ? true : undefined), 30_000);
    await waitFor('lag 0 again', async () => ((await lagSum()) === 0 ? true : undefined), 30_000);
  });
});
