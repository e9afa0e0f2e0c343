/**
 * The projector process's ops endpoints with its three projections in one registry, as main.ts
 * wires them: /health 200 at once; /ready 503 until every projection's consumer has joined, then
 * 200 with each one named; /metrics with the process metrics, the projections' counters and
 * kafka_consumer_lag of all three consumers at 0 once caught up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsServer } from '../../lib/http/ops.ts';
import { startOpsServerFor } from '../../lib/http/ops.ts';
import { ensureTopics } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { createServiceRegistry } from '../../lib/metrics.ts';
import { sampleSum, samplesOf, sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import {
  createTestEnv,
  produceAll,
  roundMessage,
  sampleRounds,
  type TestEnv,
} from '../../tests/support/projector.ts';
import { type AuthKeysProjector, buildAuthKeysProjector } from './auth-keys/projector.ts';
import { projectorProcessView } from './ops-http.ts';
import { buildRoundsProjector, type RoundsProjector } from './projector.ts';
import { buildWalletProjector, type WalletProjector } from './wallet/projector.ts';

const logger = createLogger('test', 'silent');
let e: TestEnv;
let rounds: RoundsProjector;
let keys: AuthKeysProjector;
let wallet: WalletProjector;
let ops: OpsServer;
const url = (path: string) => `http://127.0.0.1:${ops.port}${path}`;

beforeAll(async () => {
  e = await createTestEnv('ops', { KAFKA_LAG_REFRESH_MS: '200' });
  const admin = e.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, e.config, ['authKeys', 'walletTransactions']);
  await admin.disconnect();
  const registry = createServiceRegistry('projector');
  const deps = { config: e.config, kafka: e.kafka, sql: e.sql, logger };
  rounds = buildRoundsProjector({ ...deps, options: { registry } });
  keys = buildAuthKeysProjector({ ...deps, registry });
  wallet = buildWalletProjector({ ...deps, registry });
  ops = await startOpsServerFor(projectorProcessView(rounds, { 'auth-keys': keys, wallet }), '127.0.0.1', 0);
});

afterAll(async () => {
  await ops?.close();
  for (const p of [rounds, keys, wallet]) await p?.stop().catch(() => {});
  await e?.close();
});

describe('projector process ops endpoints', () => {
  it('is live at once, ready once all three projections joined, and shows their lag at 0', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    const before = await fetch(url('/ready'));
    expect(before.status).toBe(503);
    expect(await before.json()).toMatchObject({
      ready: false,
      projections: { rounds: false, 'auth-keys': false, wallet: false },
    });

    await produceAll(e.producer, e.topic, sampleRounds(20).map(roundMessage));
    await Promise.all([rounds.start(), keys.start(), wallet.start()]);
    const body = await waitFor('/ready 200', async () => {
      const res = await fetch(url('/ready'));
      return res.status === 200 ? await res.json() : undefined;
    });
    expect(body).toMatchObject({
      ready: true,
      consumer: true,
      database: true,
      projections: { rounds: true, 'auth-keys': true, wallet: true },
    });

    const consumers = ['projector-rounds', 'projector-auth-keys', 'projector-wallet'];
    const text = await waitFor('every projection caught up', async () => {
      const t = await (await fetch(url('/metrics'))).text();
      const each = consumers.map((c) => samplesOf(t, 'kafka_consumer_lag', { consumer: c }));
      const projected = sampleValue(t, 'projector_records_projected_total', { projection: 'rounds' });
      return each.every((s) => s.length === e.config.kafka.partitions && s.every((x) => x.value === 0)) &&
        projected === 80
        ? t
        : undefined;
    });
    expect(sampleSum(text, 'kafka_consumer_lag', { service: 'projector' })).toBe(0);
    expect(sampleValue(text, 'projector_batch_size_count', { projection: 'rounds' })).toBeGreaterThan(0);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'projector' })).toBeGreaterThan(0);
    expect(sampleValue(text, 'nodejs_heap_size_used_bytes', { service: 'projector' })).toBeGreaterThan(0);

    expect((await fetch(url('/nope'))).status).toBe(404);
    expect((await fetch(url('/metrics'), { method: 'POST' })).status).toBe(405);
  });
});
