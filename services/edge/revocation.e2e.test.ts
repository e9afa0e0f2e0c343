/**
 * Revocation across processes: two edge processes (`services/edge/main.ts`) each
 * hold the key table from the `auth-keys` topic. After a KeyRevoked is appended, each refuses a
 * NEW connection with the key or one of its tokens within one second, and closes the streams
 * that were open with it (WebSocket 1008).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKey } from '../../tests/support/credentials.ts';
import { createTestLog, type TestLog } from '../../tests/support/edge.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { freePort, type Service, startService, uniqueId } from '../../tests/support/processes.ts';
import { attempt, type EdgePorts } from '../../tests/support/stream-clients.ts';

interface Proc {
  readonly svc: Service;
  readonly ports: EdgePorts;
}

describe('revocation across edge processes', () => {
  let log: TestLog;
  const procs: Proc[] = [];
  const key = testKey({ scopes: ['stream:*'] });

  beforeAll(async () => {
    log = await createTestLog({ TOPIC_NAMESPACE: `${uniqueId('e2e-revoke-')}-` });
    await log.appendKey({ type: 'KeyCreated', value: key.event });
    for (let i = 0; i < 2; i++) {
      const ports = { http: await freePort(), ws: await freePort(), grpc: await freePort() };
      const svc = startService('services/edge/main.ts', {
        TOPIC_NAMESPACE: log.config.kafka.topicNamespace,
        AUTH_TOKEN_SECRET: log.config.auth.tokenSecret,
        EDGE_HTTP_PORT: String(ports.http),
        EDGE_WS_PORT: String(ports.ws),
        GRPC_PORT: String(ports.grpc),
        AUTH_REQUIRE_WS: 'true',
      });
      procs.push({ svc, ports });
    }
    for (const p of procs) {
      await waitFor('edge ready', async () => {
        const r = await fetch(`http://127.0.0.1:${p.ports.http}/ready`).catch(() => undefined);
        return r?.status === 200 ? true : undefined;
      });
    }
  }, 90_000);
  afterAll(async () => {
    for (const p of procs) await p.svc.stop('SIGKILL');
    await log?.close();
  });

  it('each process refuses the revoked key and its tokens within 1 s and closes its open streams', async () => {
    const open = await Promise.all(
      procs.map((p) => attempt(p.ports, 'ws', { path: 'crash', credential: key.token(log.tokenSecret) })),
    );
    expect(open.map((a) => a.status)).toEqual([200, 200]);
    await log.appendKey({ type: 'KeyRevoked', value: { key_id: key.keyId, at: Date.now() } });
    // Within a second of the revocation being on the log (the append's own ack is not the edges').
    const revokedAt = Date.now();

    const refusedAfter = await Promise.all(
      procs.map(async (p) => {
        for (;;) {
          const a = await attempt(p.ports, 'ws', { path: 'crash', credential: key.token(log.tokenSecret) });
          a.close();
          if (a.status === 401) return Date.now() - revokedAt;
          if (Date.now() - revokedAt > 5_000) return Number.POSITIVE_INFINITY;
          await new Promise((r) => setTimeout(r, 25));
        }
      }),
    );
    for (const ms of refusedAfter) expect(ms).toBeLessThan(1_000);
    expect(await Promise.all(open.map((a) => a.ended))).toEqual([1008, 1008]);
    for (const p of procs) {
      for (const proto of ['sse', 'grpc', 'grpc-proxy'] as const) {
        const a = await attempt(p.ports, proto, { path: 'crash', credential: key.secret });
        a.close();
        expect(a.status).toBe(401);
      }
    }
    // The secret never reaches the logs.
    for (const p of procs) expect(p.svc.output()).not.toContain(key.secret);
  });
});
