import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../tests/support/poll.ts';
import { betBody, rewardsBody, startTestSandbox, type TestSandbox } from '../../tests/support/sandbox.ts';

type HttpResult = { status: number; body: string } | { error: string };

/** One request over a real socket; `timeoutMs` makes the client hang up like a timed-out caller. */
function httpCall(
  port: number,
  method: string,
  path: string,
  payload: string,
  headers: Record<string, string>,
  timeoutMs = 5_000,
): Promise<HttpResult> {
  return new Promise((resolve) => {
    // Node sends a GET body with neither Content-Length nor chunking unless told its length,
    // which the server then reads as a broken next request (400): form-B callers must set it.
    const sized = { ...headers, 'content-length': String(Buffer.byteLength(payload)) };
    const req = request({ host: '127.0.0.1', port, method, path, headers: sized }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(payload);
  });
}

async function setFaults(sb: TestSandbox, rules: unknown): Promise<number> {
  const res = await sb.app.inject({
    method: 'PUT',
    url: '/_sandbox/faults',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(rules),
  });
  return res.statusCode;
}

describe('operator sandbox fault injection', () => {
  let sb: TestSandbox;
  let port: number;
  let nextId = 1_000;
  const id = () => {
    nextId += 4;
    return nextId;
  };
  beforeAll(async () => {
    sb = await startTestSandbox({ SANDBOX_INITIAL_BALANCE: '100.00' });
    await sb.app.listen({ host: '127.0.0.1', port: 0 });
    port = (sb.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('PUT validates the rules; GET lists them with remaining counts; DELETE clears', async () => {
    expect(await setFaults(sb, [{ mode: 'explode' }])).toBe(400);
    expect(await setFaults(sb, { mode: 'error500' })).toBe(400);
    expect(await setFaults(sb, [{ mode: 'latency', latencyMs: -1 }])).toBe(400);
    expect(await setFaults(sb, [{ mode: 'error500', probability: 2 }])).toBe(400);
    expect(await setFaults(sb, [{ kind: 'win', mode: 'error500', count: 2 }])).toBe(200);
    const listed = await sb.app.inject({ method: 'GET', url: '/_sandbox/faults' });
    expect(listed.json()).toEqual({ rules: [{ kind: 'win', mode: 'error500', count: 2 }] });
    // A rule for wins leaves bets alone.
    expect((await sb.call('POST', '/wallet/bet', betBody(id(), 1, 'f0'))).status).toBe(200);
    const cleared = await sb.app.inject({ method: 'DELETE', url: '/_sandbox/faults' });
    expect(cleared.json()).toEqual({ rules: [] });
    expect((await sb.app.inject({ method: 'GET', url: '/_sandbox/faults' })).json()).toEqual({ rules: [] });
  });

  it('latency delays the answer, then applies normally', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'latency', latencyMs: 300, count: 1 }]);
    const started = performance.now();
    const r = await sb.call('POST', '/wallet/bet', betBody(id(), 1, 'f1'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(r.status).toBe(200);
    expect(await sb.balance('f1')).toBe(9_900);
  });

  it('error500 answers 500 and applies nothing; the retry (rule spent) applies once', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'error500', count: 1 }]);
    const body = betBody(id(), 2, 'f2');
    const r = await sb.call('POST', '/wallet/bet', body);
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({ error: { code: 'INJECTED_FAULT' } });
    expect(await sb.balance('f2')).toBeNull();
    expect((await sb.call('POST', '/wallet/bet', body)).status).toBe(200);
    expect(await sb.balance('f2')).toBe(9_800);
  });

  it('timeout holds the request without applying, then answers 500', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'timeout', latencyMs: 300, count: 1 }]);
    const started = performance.now();
    const r = await sb.call('POST', '/wallet/bet', betBody(id(), 3, 'f3'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(r.status).toBe(500);
    expect(await sb.balance('f3')).toBeNull();
  });

  it('timeout (default 60 s) lets go when the caller hangs up, and applies nothing', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'timeout', count: 1 }]);
    const payload = JSON.stringify(betBody(id(), 3, 'f4'));
    const r = await httpCall(port, 'POST', '/wallet/bet', payload, sb.signedHeaders(payload), 300);
    expect(r).toEqual({ error: 'client timeout' });
    // The server sees the hang-up after the client does: wait for it (up to 10 s), then check.
    const dropped = /sandbox_callbacks_total\{kind="bet",form="A",status="dropped"[^}]*\} 1/;
    const metrics = async () => (await sb.app.inject({ method: 'GET', url: '/metrics' })).body;
    await waitFor(
      'the dropped call counted',
      async () => dropped.test(await metrics()) || undefined,
      10_000,
      50,
    ).catch(() => {}); // the check below fails with the whole text
    expect(await metrics()).toMatch(dropped);
    expect(await sb.balance('f4')).toBeNull();
  });

  it('commit-then-500 applies, answers 500, and the retry gets the first answer', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'commit-then-500', count: 1 }]);
    const body = betBody(id(), 4, 'f5');
    const r = await sb.call('POST', '/wallet/bet', body);
    expect(r.status).toBe(500);
    expect(await sb.balance('f5')).toBe(9_600);
    const retry = await sb.call('POST', '/wallet/bet', body);
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({ old_balance: '100.00', new_balance: '96.00' });
    expect(await sb.balance('f5')).toBe(9_600);
  });

  it('commit-then-drop applies and cuts the connection; the retry gets the first answer', async () => {
    await setFaults(sb, [{ kind: 'win', mode: 'commit-then-drop', count: 1 }]);
    await sb.call('POST', '/wallet/bet', betBody(2_000, 5, 'f6', { round_id: '55' }));
    const payload = JSON.stringify(rewardsBody(2_001, 9.8, 'f6', { round_id: '55' }));
    const r = await httpCall(port, 'GET', '/webhooks/platform/rewards', payload, sb.signedHeaders(payload));
    expect(r).toHaveProperty('error');
    expect(await sb.balance('f6')).toBe(10_480);
    // The retry over a real socket: form B's GET body reaches the route.
    const again = await httpCall(
      port,
      'GET',
      '/webhooks/platform/rewards',
      payload,
      sb.signedHeaders(payload),
    );
    expect(again).toMatchObject({ status: 200 });
    expect(JSON.parse((again as { body: string }).body)).toMatchObject({
      old_balance: '95.00',
      new_balance: '104.80',
      provider_tx_id: '2001',
    });
    expect(await sb.balance('f6')).toBe(10_480);
  });

  it('malformed applies and answers 200 with a body that is not JSON', async () => {
    await setFaults(sb, [{ kind: 'bet', mode: 'malformed', count: 1 }]);
    const body = betBody(id(), 6, 'f7');
    const r = await sb.call('POST', '/wallet/bet', body);
    expect(r.status).toBe(200);
    expect(r.json).toBeUndefined();
    expect(await sb.balance('f7')).toBe(9_400);
    const retry = await sb.call('POST', '/wallet/bet', body);
    expect(retry.json).toMatchObject({ new_balance: '94.00' });
  });

  it('a fault does not hide a refusal: error500 after a bad signature is still 401', async () => {
    await setFaults(sb, [{ mode: 'error500', count: 1 }]);
    const r = await sb.call('POST', '/wallet/bet', betBody(id(), 1, 'f8'), { sign: 'none' });
    expect(r.status).toBe(401);
    // The rule was not spent by the refused request.
    expect((await sb.app.inject({ method: 'GET', url: '/_sandbox/faults' })).json().rules).toHaveLength(1);
    await sb.app.inject({ method: 'DELETE', url: '/_sandbox/faults' });
  });
});

describe('operator sandbox faults: probability and shutdown', () => {
  it('a probabilistic rule fires when random() < probability', async () => {
    const draws = [0.9, 0.1];
    const sb = await startTestSandbox({}, { random: () => draws.shift() ?? 0.5 });
    try {
      await setFaults(sb, [{ mode: 'error500', probability: 0.5 }]);
      expect((await sb.call('POST', '/wallet/bet', betBody(4, 1, 'p'))).status).toBe(200);
      expect((await sb.call('POST', '/wallet/bet', betBody(8, 1, 'p'))).status).toBe(500);
      expect(await sb.balance('p')).toBe(99_900);
    } finally {
      await sb.close();
    }
  });

  it('close() releases a request held by a 60 s timeout fault', async () => {
    const sb = await startTestSandbox();
    await setFaults(sb, [{ mode: 'timeout' }]);
    const held = sb.call('POST', '/wallet/bet', betBody(4, 1, 'h'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await sb.close();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect((await held).status).toBe(500);
  });
});
