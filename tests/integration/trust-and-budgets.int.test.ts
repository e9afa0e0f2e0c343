/**
 * Trust boundaries and budgets of the API (findings 3, 4 and 5), on a real
 * broker and Postgres with the API really listening (TCP and its proxy socket) and a real gateway:
 * - a spoofed X-Forwarded-For sent straight to the API's port from this host does not change the
 *   rate-limit identity; through the proxy socket (the gateway) each browser has its own budget,
 *   and a browser spoofing the header through the gateway is still counted as itself;
 * - failed credentials spend a failure budget per IP: past it, 429 (REST and session API);
 * - minting browser keys is limited per IP and per bound_domain; asking again for a pair is not.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.ts';
import { type ApiListeners, listenApi } from '../../services/api/listen.ts';
import { buildGateway, type Gateway } from '../../services/gateway/gateway.ts';
import { type AccessTestApi, startAccessTestApi } from '../support/access.ts';
import { loadConfig } from '../support/config.ts';

const RATE_LIMIT_MAX = 5;
let t: AccessTestApi;
let listeners: ApiListeners;
let gateway: Gateway;
let n = 0;
/** A fresh documentation-range address per call (RFC 5737), so tests do not share budgets. */
const nextIp = () => `198.51.100.${++n}`;

beforeAll(async () => {
  t = await startAccessTestApi({
    RATE_LIMIT_MAX,
    RATE_LIMIT_AUTH_FAILURES: 20,
    RATE_LIMIT_BROWSER_KEYS_PER_IP: 3,
    RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN: 4,
  });
  const socket = join(tmpdir(), `casino-api-${randomBytes(4).toString('hex')}.sock`);
  listeners = await listenApi(t.app, t.config, { socket, port: 0 });
  gateway = buildGateway({
    config: loadConfig(process.env, {
      GATEWAY_PORT: 0,
      GATEWAY_OPS_PORT: 0,
      GATEWAY_API_SOCKET: socket,
      GATEWAY_EDGE_HTTP_URL: 'http://127.0.0.1:9',
      GATEWAY_EDGE_WS_URL: 'http://127.0.0.1:9',
      GATEWAY_WT_HTTP_URL: 'http://127.0.0.1:9',
    }),
    logger: createLogger('gateway-test', 'silent'),
  });
  await gateway.start();
});
afterAll(async () => {
  await gateway?.stop();
  await listeners?.closeSocket();
  await t?.close();
});

/** GET `path` over TCP (`port`) or the Unix socket, with headers; the status. */
function get(
  where: { port: number; localAddress?: string } | { socketPath: string },
  path: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', ...where, path, headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

/** Statuses of `count` GETs of /api/games, each with a new spoofed X-Forwarded-For. */
async function spoofed(
  where: { port: number; localAddress?: string } | { socketPath: string },
  count: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(await get(where, '/api/games', { 'x-forwarded-for': nextIp() }));
  return out;
}

describe('X-Forwarded-For is believed only from the proxy socket', () => {
  it('straight to the TCP port from this host, a spoofed header does not change the identity', async () => {
    const statuses = await spoofed({ port: listeners.port }, RATE_LIMIT_MAX + 1);
    expect(statuses.slice(0, RATE_LIMIT_MAX).every((s) => s === 200)).toBe(true);
    expect(statuses[RATE_LIMIT_MAX]).toBe(429);
  });

  it('on the proxy socket, the client named by the proxy has its own budget', async () => {
    const statuses = await spoofed({ socketPath: listeners.socket }, RATE_LIMIT_MAX + 3);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const one = nextIp();
    const mine: number[] = [];
    for (let i = 0; i <= RATE_LIMIT_MAX; i++)
      mine.push(await get({ socketPath: listeners.socket }, '/api/games', { 'x-forwarded-for': one }));
    expect(mine[RATE_LIMIT_MAX]).toBe(429);
  });

  it('through the gateway, a browser spoofing the header is counted as the address the gateway saw', async () => {
    // From 127.0.0.3, an address the TCP test above did not spend: the gateway names it last.
    const statuses = await spoofed({ port: gateway.port, localAddress: '127.0.0.3' }, RATE_LIMIT_MAX + 1);
    expect(statuses.slice(0, RATE_LIMIT_MAX).every((s) => s === 200)).toBe(true);
    expect(statuses[RATE_LIMIT_MAX]).toBe(429);
  });
});

describe('failed credentials count', () => {
  it('120 bad keys from one IP: 401 until the failure budget is spent, then 429; another IP is not affected', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await t.app.inject({
        url: '/api/games',
        remoteAddress: ip,
        headers: { 'x-api-key': `sk_live_${randomBytes(32).toString('hex')}` },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    // Even the right key is refused from that IP until the window ends; from another it works.
    const blocked = await t.app.inject({
      url: '/api/auth/keys',
      remoteAddress: ip,
      headers: { 'x-api-key': t.adminKey },
    });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    const other = await t.app.inject({
      url: '/api/auth/keys',
      remoteAddress: nextIp(),
      headers: { 'x-api-key': t.adminKey },
    });
    expect(other.statusCode).toBe(200);
  });

  it('wrong operator bearers on the session API: 429 problem JSON past the budget', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await t.app.inject({
        url: '/sessions/active',
        remoteAddress: ip,
        headers: { authorization: `Bearer op_${randomBytes(32).toString('hex')}` },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    const last = await t.app.inject({
      url: '/sessions/active',
      remoteAddress: ip,
      headers: { authorization: 'Bearer op_x' },
    });
    expect(last.statusCode).toBe(429);
    expect(last.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('browser-key minting', () => {
  const mint = (ip: string, visitor: string, domain: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/auth/browser-key',
      remoteAddress: ip,
      payload: { visitor_id: visitor, bound_domain: domain },
    });

  it('is limited per IP (3 new keys), while the same pair is given again', async () => {
    const ip = nextIp();
    const domain = `ip-${randomBytes(3).toString('hex')}.example.com`;
    const before = await t.keyTopicEnd();
    const news = [];
    for (let i = 0; i < 3; i++) news.push((await mint(ip, `v${i}`, domain)).statusCode);
    expect(news).toEqual([200, 200, 200]);
    const fourth = await mint(ip, 'v3', domain);
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json()).toEqual({ error: 'Too many requests, please slow down', success: false });
    const again = await mint(ip, 'v0', domain);
    expect(again.json()).toMatchObject({ success: true, new: false });
    expect(await t.keyTopicEnd()).toBe(before + 3n);
  });

  it('is limited per bound_domain (4 new keys), whatever the IPs', async () => {
    const domain = `dom-${randomBytes(3).toString('hex')}.example.com`;
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await mint(nextIp(), `w${i}`, domain)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await mint(nextIp(), 'w9', `other-${domain}`)).statusCode).toBe(200);
  });
});
