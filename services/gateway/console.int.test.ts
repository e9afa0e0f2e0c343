/**
 * The gateway serves the built console at /console/ (scripts/build-console.ts into a temporary folder)
 * with its Content-Security-Policy, nosniff and caching headers, never proxying those paths to the API,
 * and answers 503 with how to build it when the bundle is missing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.ts';
import { buildConsole } from '../../scripts/build-console.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { CONSOLE_CSP } from './console.ts';
import { buildGateway, type Gateway } from './gateway.ts';

const logger = createLogger('gateway-console-test', 'silent');
let api: FastifyInstance;
let built: Gateway;
let missing: Gateway;
let dir: string;
let emptyDir: string;
const proxied: string[] = [];

async function gatewayOn(consoleDir: string): Promise<Gateway> {
  const upstream = `http://127.0.0.1:${(api.server.address() as { port: number }).port}`;
  const config = loadConfig(process.env, {
    GATEWAY_PORT: 0,
    GATEWAY_OPS_PORT: 0,
    GATEWAY_API_URL: upstream,
    GATEWAY_EDGE_HTTP_URL: upstream,
    GATEWAY_EDGE_WS_URL: upstream,
    GATEWAY_WT_HTTP_URL: upstream,
    GATEWAY_CONSOLE_DIR: consoleDir,
  });
  const g = buildGateway({ config, logger });
  await g.start();
  return g;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-built-'));
  emptyDir = await mkdtemp(join(tmpdir(), 'console-missing-'));
  await buildConsole(dir);
  api = Fastify();
  api.all('/*', async (req) => {
    proxied.push(req.url);
    return { upstream: 'api', url: req.url };
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  built = await gatewayOn(dir);
  missing = await gatewayOn(emptyDir);
});

afterAll(async () => {
  await built?.stop();
  await missing?.stop();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(emptyDir, { recursive: true, force: true });
});

const urlOf = (g: Gateway, path: string) => `http://127.0.0.1:${g.port}${path}`;

function expectConsoleHeaders(res: Response) {
  expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

describe('the console behind the gateway', () => {
  it('serves index.html at /console/ with the strict CSP, nosniff and no-store', async () => {
    const res = await fetch(urlOf(built, '/console/'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectConsoleHeaders(res);
    const html = await res.text();
    expect(html).toContain('<script type="module" src="./console.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="./console.css" />');
    // Nothing from another origin and no inline script or style (the CSP would refuse them).
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style|style=/);
  });

  it('serves the bundle, its source map and the stylesheet with the same headers', async () => {
    const js = await fetch(urlOf(built, '/console/console.js'));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toBe('no-cache');
    expectConsoleHeaders(js);
    const body = await js.text();
    expect(body.length).toBeGreaterThan(1000);
    expect(body).toContain('console.js.map');
    const css = await fetch(urlOf(built, '/console/console.css'));
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expectConsoleHeaders(css);
    expect((await fetch(urlOf(built, '/console/console.js.map'))).status).toBe(200);
    expect(proxied).toEqual([]);
  });

  it('redirects /console to /console/ (the page loads its files relative to it)', async () => {
    const res = await fetch(urlOf(built, '/console'), { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/console/');
  });

  it('answers an unknown console file 404 in the API error form and a climbing path 403, never from the API', async () => {
    const res = await fetch(urlOf(built, '/console/nope.js'));
    expect(res.status).toBe(404);
    expectConsoleHeaders(res);
    expect(await res.json()).toEqual({ error: 'Not Found', success: false });
    // A path climbing out of the folder is refused by the static file server, never read.
    const climb = await fetch(urlOf(built, '/console/..%2f..%2fpackage.json'));
    expect(climb.status).toBe(403);
    expect(await climb.text()).not.toContain('casino-rounds-platform');
    expect(proxied).toEqual([]);
  });

  it('still proxies every other path to the API', async () => {
    const res = await fetch(urlOf(built, '/api/portal/session'));
    expect(await res.json()).toEqual({ upstream: 'api', url: '/api/portal/session' });
    expect(proxied).toEqual(['/api/portal/session']);
  });

  it('answers 503 with how to build it when the bundle is missing: HTML for a browser, JSON otherwise', async () => {
    const page = await fetch(urlOf(missing, '/console/'), { headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expectConsoleHeaders(page);
    expect(await page.text()).toContain('scripts/build-console.ts');
    const json = await fetch(urlOf(missing, '/console/console.js'));
    expect(json.status).toBe(503);
    const body = (await json.json()) as { error: string; success: boolean };
    expect(body.success).toBe(false);
    expect(body.error).toMatch(/^Console not built: run .*scripts\/build-console\.ts/);
  });
});
