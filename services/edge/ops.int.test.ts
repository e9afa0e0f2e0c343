/**
 * The edge's /health, /ready and /metrics against the real broker: once live, /metrics shows the
 * SSE subscriber and its deliveries, the process metrics with `service="edge"`, and
 * kafka_consumer_lag of the rounds source and of the key table at 0 on every partition. (The
 * HTTP listener opens only once the source is live, so /ready is never seen 503 before the join.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestLog, round, startEdge, type TestLog } from '../../tests/support/edge.ts';
import { samplesOf, sampleValue } from '../../tests/support/metrics.ts';
import { until, waitFor } from '../../tests/support/poll.ts';
import { openSse } from '../../tests/support/sse-client.ts';
import type { Edge } from './edge.ts';
import { createSseTransport } from './transports/sse/sse.ts';

let log: TestLog;
let edge: Edge;
const url = (path: string) => `http://127.0.0.1:${edge.httpPort}${path}`;
const scrape = async () => (await fetch(url('/metrics'))).text();

beforeAll(async () => {
  log = await createTestLog({ KAFKA_LAG_REFRESH_MS: 200 });
  await log.append([round('crash', 1), round('double', 1)]);
  edge = await startEdge(log, [createSseTransport()]);
});

afterAll(async () => {
  await edge?.stop(0);
  await log?.close();
});

describe('edge ops endpoints', () => {
  it('/metrics: subscribers, deliveries, process metrics and consumer lag 0 per partition', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    expect((await fetch(url('/ready'))).status).toBe(200);
    const sse = await openSse(edge.httpPort, '/sse/crash');
    await new Promise((r) => setTimeout(r, 100));
    await log.append([round('crash', 2), round('crash', 3)]);
    await until(() => sse.named().filter((e) => e.event === 'message').length === 2, 10_000, 'two rounds');

    const partitions = log.config.kafka.partitions;
    const text = await waitFor('lag of both consumers on every partition', async () => {
      const t = await scrape();
      const source = samplesOf(t, 'kafka_consumer_lag', { consumer: 'edge-source', topic: log.topic });
      const keys = samplesOf(t, 'kafka_consumer_lag', { consumer: 'key-table' });
      return source.length === partitions && keys.length === partitions ? t : undefined;
    });
    for (const s of samplesOf(text, 'kafka_consumer_lag')) expect(s.value).toBe(0);
    expect(sampleValue(text, 'edge_subscribers', { protocol: 'sse', service: 'edge' })).toBe(1);
    // The `initial` event (the latest crash round) and the two live ones.
    expect(sampleValue(text, 'edge_deliveries_total', { protocol: 'sse' })).toBe(3);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'edge' })).toBeGreaterThan(0);
    sse.close();
  });
});
