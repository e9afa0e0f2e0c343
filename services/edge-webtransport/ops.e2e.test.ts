/**
 * The WebTransport edge's /health, /ready and /metrics with the Deno process against the real
 * broker (no browser): once ready, /metrics carries `service="edge-webtransport"` on every series,
 * the process metrics, and kafka_consumer_lag of its rounds source and key table at 0 on every
 * partition, including after rounds appended while it runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { parseMetrics, samplesOf } from '../../tests/support/metrics.ts';
import { syntheticRound } from '../../tests/support/rounds-fixture.ts';
import {
  createWtTestBed,
  startWtEdge,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../../tests/support/webtransport.ts';

let bed: WtTestBed;
let edge: WtEdgeProcess;
let httpPort: number;
const url = (path: string) => `http://127.0.0.1:${httpPort}${path}`;

async function appendRounds(from: number, n: number): Promise<void> {
  const rounds = Array.from({ length: n }, (_, i) => syntheticRound(0, from + i, Date.now()));
  await bed.producer.send({
    topic: topicName(bed.config, 'rounds'),
    messages: rounds.map((r) => ({ key: r.game_slug, value: encodeRound(r) })),
  });
}

beforeAll(async () => {
  bed = await createWtTestBed('t-wt-ops-');
  await appendRounds(1, 3);
  edge = startWtEdge({ TOPIC_NAMESPACE: bed.ns, WT_DEV_CERT_DIR: bed.certDir, KAFKA_LAG_REFRESH_MS: '200' });
  ({ httpPort } = await edge.started);
}, 120_000);

afterAll(async () => {
  await edge?.kill();
  await bed?.close();
});

describe('WebTransport edge ops endpoints', () => {
  it('is live and ready, and /metrics shows its consumers caught up and its process metrics', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    await waitFor('/ready', async () => ((await fetch(url('/ready'))).status === 200 ? true : undefined));
    await appendRounds(4, 2);

    const partitions = bed.config.kafka.partitions;
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
