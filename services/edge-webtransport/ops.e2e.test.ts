/**
 * The WebTransport edge's /health, /ready and /metrics with the Deno process against the real
 * broker (no browser): once ready, /metrics carries `service="edge-webtransport"` on every series,
 * the process metrics, and kafka_consumer_lag of its rounds source and key table at 0 on every
 * partition, including after rounds appended while it runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRound } from '../../bench/lib.ts';
import { type Config, loadConfig } from '../../lib/config.ts';
import { createKafka } from '../../lib/kafka.ts';
import { createLogger } from '../../lib/logger.ts';
import { encodeRound } from '../../lib/rounds.ts';
import { ensureTopics, topicName } from '../../lib/topics.ts';
import { parseMetrics, samplesOf } from '../../tests/helpers/metrics.ts';
import { ROOT, startWtEdge, uniqueId, type WtEdgeProcess, waitFor } from './test-support.ts';

let config: Config;
let certDir: string;
let admin: Admin;
let producer: Producer;
let edge: WtEdgeProcess;
let httpPort: number;
const url = (path: string) => `http://127.0.0.1:${httpPort}${path}`;

async function appendRounds(from: number, n: number): Promise<void> {
  const rounds = Array.from({ length: n }, (_, i) => syntheticRound(0, from + i, Date.now()));
  await producer.send({
    topic: topicName(config, 'rounds'),
    messages: rounds.map((r) => ({ key: r.game_slug, value: encodeRound(r) })),
  });
}

beforeAll(async () => {
  const ns = `${uniqueId('t-wt-ops-')}-`;
  config = loadConfig(process.env, { TOPIC_NAMESPACE: ns });
  certDir = mkdtempSync(join(tmpdir(), 'wt-ops-cert-'));
  execFileSync('bash', [join(ROOT, 'scripts/dev-cert.sh')], {
    env: { ...process.env, WT_DEV_CERT_DIR: certDir },
  });
  const kafka = createKafka(config, 'wt-ops-e2e', createLogger('wt-ops-e2e', 'warn'));
  admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'authKeys']);
  producer = kafka.producer();
  await producer.connect();
  await appendRounds(1, 3);
  edge = startWtEdge({ TOPIC_NAMESPACE: ns, WT_DEV_CERT_DIR: certDir, KAFKA_LAG_REFRESH_MS: '200' });
  ({ httpPort } = await edge.started);
}, 120_000);

afterAll(async () => {
  await edge?.kill();
  await producer?.disconnect();
  await admin
    ?.deleteTopics({ topics: [topicName(config, 'rounds'), topicName(config, 'authKeys')] })
    .catch(() => {});
  await admin?.disconnect();
  rmSync(certDir, { recursive: true, force: true });
});

describe('WebTransport edge ops endpoints', () => {
  it('is live and ready, and /metrics shows its consumers caught up and its process metrics', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    await waitFor('/ready', async () => ((await fetch(url('/ready'))).status === 200 ? true : undefined));
    await appendRounds(4, 2);

    const partitions = config.kafka.partitions;
    const text = await waitFor('lag of both consumers on every partition', async () => {
      const t = await (await fetch(url('/metrics'))).text();
      const source = samplesOf(t, 'kafka_consumer_lag', { consumer: 'edge-source' });
      const keys = samplesOf(t, 'kafka_consumer_lag', { consumer: 'key-table' });
      const all = [...source, ...keys];
      return source.length === partitions && keys.length === partitions && all.every((s) => s.value === 0)
        ? t
        : undefined;
    });
    const samples = parseMetrics(text);
    expect(samples.every((s) => s.labels.service === 'edge-webtransport')).toBe(true);
    expect(samplesOf(text, 'process_resident_memory_bytes')[0]?.value ?? 0).toBeGreaterThan(0);
    // The protocol's series exist at 0 before any session (webtransport.e2e.test.ts counts sessions).
    expect(samplesOf(text, 'edge_subscribers', { protocol: 'webtransport' })[0]?.value).toBe(0);
    expect(samplesOf(text, 'edge_deliveries_total', { protocol: 'webtransport' })[0]?.value).toBe(0);
  });
});
