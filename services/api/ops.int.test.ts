/**
 * The API's /metrics as main.ts wires it (one registry for the app and the key table): process
 * metrics and request durations with `service="api"`, and kafka_consumer_lag of the key table's
 * consumer at 0 once it applied the admin key; it follows a key appended afterwards back to 0.
 * (/ready with Postgres down is in app.int.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthTestApi, startAuthTestApi } from '../../tests/support/auth.ts';
import { samplesOf, sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';

let t: AuthTestApi;
const scrape = async () => (await t.app.inject('/metrics')).body;

beforeAll(async () => {
  t = await startAuthTestApi({ KAFKA_LAG_REFRESH_MS: 200 });
});

afterAll(async () => {
  await t?.close();
});

describe('API metrics', () => {
  it('serves request durations, process metrics and the key table lag per partition', async () => {
    expect((await t.app.inject('/ready')).statusCode).toBe(200);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/auth/keys',
      headers: { 'x-api-key': t.adminKey },
      payload: { name: 'metrics-test', scopes: ['read:games'] },
    });
    expect(created.statusCode).toBe(201);

    const text = await waitFor('key table lag 0', async () => {
      const body = await scrape();
      const lag = samplesOf(body, 'kafka_consumer_lag', { consumer: 'key-table' });
      return lag.length === 1 && lag[0]?.value === 0 ? body : undefined;
    });
    expect(samplesOf(text, 'kafka_consumer_lag', { consumer: 'key-table' })[0]?.labels).toMatchObject({
      partition: '0',
      service: 'api',
    });
    const posted = { method: 'POST', route: '/api/auth/keys', status_code: '201', service: 'api' };
    expect(sampleValue(text, 'http_request_duration_seconds_count', posted)).toBe(1);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'api' })).toBeGreaterThan(0);
  });
});
