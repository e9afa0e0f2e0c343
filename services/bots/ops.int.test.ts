/**
 * The bots' /health, /ready and /metrics against a small stand-in of the API on loopback (the
 * three routes a bot calls): /ready is 503 until the bots start, 200 after; /metrics counts the
 * sessions they open, the bets accepted, the refused ones (the stand-in refuses every third bet)
 * and the bots running, with `service="bots"`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsServer } from '../../lib/http/ops.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { sampleValue } from '../../tests/support/metrics.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { type Bots, buildBots } from './bots.ts';
import { startBotsOps } from './ops.ts';

let api: FastifyInstance;
let dir: string;
let bots: Bots;
let ops: OpsServer;
let bets = 0;
const url = (path: string) => `http://127.0.0.1:${ops.port}${path}`;

beforeAll(async () => {
  // A bot's request cut by stop() can leave a connection fastify does not count as idle.
  api = Fastify({ forceCloseConnections: true });
  api.post('/games/request-access', async () => ({ game_url: 'http://127.0.0.1/play/?launch=abc' }));
  api.post('/play/open', async () => ({ player_token: 'pt_test' }));
  api.post('/play/bets', async (_req, reply) => {
    bets += 1;
    return bets % 3 === 0 ? reply.code(409).send({ code: 'ROUND_CLOSED' }) : reply.code(202).send({});
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'bots-ops-'));
  const operatorFile = join(dir, 'operator.json');
  writeFileSync(operatorFile, JSON.stringify({ operator_id: 'op-test', api_token: 'op_test' }));
  const config = loadConfig(process.env, {
    BOTS_PLAYERS: 2,
    BOTS_BET_INTERVAL_MS: 100,
    BOTS_HTTP_PORT: 0,
    BOTS_OPERATOR_FILE: operatorFile,
    BOTS_API_URL: `http://127.0.0.1:${(api.server.address() as { port: number }).port}`,
  });
  bots = buildBots({ config, logger: createLogger('bots-test', 'silent') });
  ops = await startBotsOps(bots, config);
});

afterAll(async () => {
  await bots?.stop();
  await ops?.close();
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bots ops endpoints', () => {
  it('is not ready before the bots start, then counts their sessions, bets and refusals', async () => {
    expect((await fetch(url('/health'))).status).toBe(200);
    expect((await fetch(url('/ready'))).status).toBe(503);
    await bots.start();
    const ready = await fetch(url('/ready'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, players: 2 });

    const text = await waitFor('a few bets and a refusal', async () => {
      const t = await (await fetch(url('/metrics'))).text();
      return (sampleValue(t, 'bots_request_failures_total', { kind: 'refused' }) ?? 0) >= 1 ? t : undefined;
    });
    expect(sampleValue(text, 'bots_sessions_opened_total', { service: 'bots' })).toBe(2);
    expect(sampleValue(text, 'bots_bets_placed_total')).toBeGreaterThanOrEqual(2);
    expect(sampleValue(text, 'bots_running')).toBe(2);
    expect(sampleValue(text, 'process_resident_memory_bytes', { service: 'bots' })).toBeGreaterThan(0);

    await bots.stop();
    expect((await fetch(url('/ready'))).status).toBe(503);
    expect(sampleValue(await (await fetch(url('/metrics'))).text(), 'bots_running')).toBe(0);
  });
});
