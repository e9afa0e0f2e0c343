/**
 * A quick clean stop (issue 13 item 8; finding 10): `npm start` (scripts/start.sh, every service)
 * with a WebSocket, an SSE and a gRPC-proxy client connected through the gateway, then Ctrl-C (SIGINT
 * to the script's process group, as a terminal sends it): everything stops within 15 s with exit
 * status 0, and no port of the stack is left open. The stack runs on free ports in its own topic
 * namespace and schema, on the suite's Kafka and Postgres (external to the script, so it leaves them
 * running).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createSql } from '../lib/db/pool.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { createLogger } from '../lib/logger.ts';
import { loadConfig } from './support/config.ts';
import { waitFor } from './support/poll.ts';
import { freePort, ROOT, waitReady } from './support/processes.ts';

const STOP_BOUND_MS = 15_000;

let child: ChildProcess;
let output = '';
let env: Record<string, string> = {};
const ports: Record<string, number> = {};
let tmp = '';
const exited = { code: undefined as number | null | undefined, at: 0 };

/** Descendants of `pid` (from /proc), deepest last. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let kids: number[] = [];
    try {
      for (const t of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/))
        if (t) kids.push(Number(t));
    } catch {
      kids = [];
    }
    for (const k of kids) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return out;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  const id = randomBytes(4).toString('hex');
  tmp = mkdtempSync(join(tmpdir(), 'quick-stop-'));
  const names = [
    'GATEWAY_PORT',
    'GATEWAY_OPS_PORT',
    'API_PORT',
    'ROUND_ENGINE_PORT',
    'PROJECTOR_PORT',
    'EDGE_HTTP_PORT',
    'EDGE_WS_PORT',
    'GRPC_PORT',
    'WT_PORT',
    'WT_HTTP_PORT',
    'SANDBOX_PORT',
    'WALLET_SAGA_HTTP_PORT',
    'SETTLEMENT_HTTP_PORT',
    'BOTS_HTTP_PORT',
  ];
  for (const n of names) ports[n] = await freePort();
  env = {
    ...(process.env as Record<string, string>),
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    TOPIC_NAMESPACE: `t-stop-${id}-`,
    DATABASE_SCHEMA: `t_stop_${id}`,
    PROJECTOR_GROUP: `t-stop-${id}-projector`,
    SETTLEMENT_GROUP: `t-stop-${id}-settlement`,
    WALLET_SAGA_GROUP: `t-stop-${id}-wallet-saga`,
    SANDBOX_DB_SCHEMA: `t_stop_${id}_sbx`,
    SANDBOX_SECRET_FILE: join(tmp, 'signing-secret'),
    BOTS_OPERATOR_FILE: join(tmp, 'operator.json'),
    BOTS_PLAYERS: '2',
    API_SOCKET: join(tmp, 'api.sock'),
    API_ENGINE_URL: `http://127.0.0.1:${ports.ROUND_ENGINE_PORT}`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.GATEWAY_PORT}`,
    // The gRPC proxy's client sends no key here.
    AUTH_REQUIRE_GRPC: 'false',
    LOG_LEVEL: 'info',
  };
  // Its own process group, as a terminal's foreground job: a SIGINT to the group is a Ctrl-C.
  child = spawn('bash', ['scripts/start.sh'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onData = (d: Buffer) => {
    output += d.toString();
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('exit', (code) => {
    exited.code = code;
    exited.at = Date.now();
  });
  const gw = `http://127.0.0.1:${ports.GATEWAY_PORT}`;
  try {
    await waitReady(`http://127.0.0.1:${ports.GATEWAY_OPS_PORT}/ready`, 150_000, 500);
    await waitReady(`http://127.0.0.1:${ports.EDGE_HTTP_PORT}/ready`, 60_000, 500);
    await waitReady(`${gw}/api/games`, 30_000, 500);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${output.slice(-6000)}`);
  }
}, 200_000);

afterAll(async () => {
  // On a failure, nothing of the stack may outlive the test.
  if (child?.pid && exited.code === undefined) {
    for (const p of descendants(child.pid).reverse()) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  const config = loadConfig(env);
  const sql = createSql(config, { max: 1 });
  await sql.unsafe(`drop schema if exists "${config.db.schema}" cascade`).catch(() => {});
  await sql.unsafe(`drop schema if exists "${env.SANDBOX_DB_SCHEMA}" cascade`).catch(() => {});
  await sql.end({ timeout: 5 });
  const admin = createKafka(config, 'quick-stop-cleanup', createLogger('test', 'error')).admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(config.kafka.topicNamespace));
  if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
  rmSync(tmp, { recursive: true, force: true });
});

describe('Ctrl-C of npm start', () => {
  it('stops everything within 15 s with exit 0 while WebSocket, SSE and gRPC-proxy clients are connected through the gateway', async () => {
    const gwPort = ports.GATEWAY_PORT as number;
    const ws = new WebSocket(`ws://127.0.0.1:${gwPort}/ws/crash`);
    const wsClosed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const stream = (path: string) =>
      new Promise<{ ended: Promise<void> }>((resolve, reject) => {
        const req = get({ host: '127.0.0.1', port: gwPort, path, agent: false }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
          res.resume();
          resolve({ ended: new Promise((r) => res.once('close', () => r())) });
        });
        req.once('error', reject);
      });
    const sse = await stream('/sse/crash');
    const proxied = await stream('/grpc-proxy/stream/crash');

    const sentAt = Date.now();
    process.kill(-(child.pid as number), 'SIGINT');
    await waitFor('npm start to exit', () => (exited.code === undefined ? undefined : true), 60_000, 100);
    const tookMs = exited.at - sentAt;
    const tail = output.slice(-5000);
    expect(exited.code, tail).toBe(0);
    expect(tookMs, `${tookMs} ms\n${tail}`).toBeLessThanOrEqual(STOP_BOUND_MS);
    // The clients were closed by the servers, not left hanging.
    await Promise.all([wsClosed, sse.ended, proxied.ended]);
    for (const [name, port] of Object.entries(ports)) expect(await portOpen(port), name).toBe(false);
  });
});
