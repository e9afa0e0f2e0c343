/**
 * The failed-credential budget on the Deno WebTransport edge (lib/auth/failure-budget.ts, the same
 * code as the API's and the Node edge's), as a process against the real broker with headless
 * Chromium as the client: with RATE_LIMIT_AUTH_FAILURES 2, two sessions with a wrong `token=` are
 * refused 401, then a session with a valid token from the same address is refused 429 (the
 * browser sees the handshake fail; the status is read from the edge's log and metrics, as in
 * webtransport.e2e.test.ts). Once Redis joins the budget, failures on the edge refuse that
 * address on the API too.
 */
import { randomBytes } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBudget, FAILURE_BUDGET_NAME, storeNamespace } from '../../lib/auth/failure-budget.ts';
import { appendKeyEvent } from '../../lib/auth/key-events.ts';
import type { Config } from '../../tests/support/config.ts';
import { loadConfig } from '../../tests/support/config.ts';
import { testKey } from '../../tests/support/credentials.ts';
import {
  BROWSER_ARGS,
  CHROMIUM,
  createWtTestBed,
  parseLogLines,
  readMetric,
  startWtEdge,
  tryOpen,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../../tests/support/webtransport.ts';

const MAX = 2;
const REDIS = loadConfig(process.env).api.rateLimitRedisUrl || 'redis://127.0.0.1:56379';
let bed: WtTestBed;
let config: Config;
let producer: Producer;
let edge: WtEdgeProcess;
let quicPort = 0;
let httpPort = 0;
let browser: Browser;
const tokenSecret = randomBytes(32);
const good = testKey({ scopes: ['stream:*'] });

beforeAll(async () => {
  bed = await createWtTestBed('t-wtb-');
  ({ config, producer } = bed);
  await appendKeyEvent(producer, config, { type: 'KeyCreated', value: good.event });
  edge = startWtEdge({
    TOPIC_NAMESPACE: bed.ns,
    WT_DEV_CERT_DIR: bed.certDir,
    EDGE_DRAIN_MS: '200',
    AUTH_TOKEN_SECRET: tokenSecret.toString('hex'),
    RATE_LIMIT_AUTH_FAILURES: String(MAX),
    RATE_LIMIT_REDIS_URL: REDIS,
  });
  ({ quicPort, httpPort } = await edge.started);
  await waitFor('/ready', async () =>
    (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200 ? true : undefined,
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await edge?.kill();
  await bed?.close();
});

/** Opens a session from a page of its own (Chromium throttles handshakes after failed ones per page). */
async function open(token: string): Promise<string> {
  const page: Page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${httpPort}/health`);
  try {
    return await tryOpen(page, `https://127.0.0.1:${quicPort}/wt?game=crash&token=${token}`, httpPort);
  } finally {
    await page.close();
  }
}

const refusals = () => parseLogLines(edge.output()).filter((l) => l.msg === 'session refused');

describe('failed-credential budget on the WebTransport edge (RATE_LIMIT_AUTH_FAILURES 2)', () => {
  it('a valid token opens a session while the budget is unspent', async () => {
    expect(await open(good.token(tokenSecret))).toBe('open');
  });

  it('wrong tokens are 401 until the budget is spent; then a valid token from that address is 429', async () => {
    const seen = refusals().length;
    for (let i = 0; i < MAX; i++) {
      expect(await open(`sk_live_${randomBytes(32).toString('hex')}`)).toMatch(/^refused: /);
    }
    expect(await open(good.token(tokenSecret))).toMatch(/^refused: /);
    const lines = await waitFor('three refusals in the log', () => {
      const r = refusals().slice(seen);
      return r.length >= MAX + 1 ? r : undefined;
    });
    expect(lines.map((l) => l.status)).toEqual([...Array(MAX).fill(401), 429]);
    expect(lines.at(-1)?.error).toBe('Too many requests, please slow down (rate_limited)');
    expect(
      await readMetric(httpPort, 'edge_auth_refusals_total', 'protocol="wt",reason="rate_limited"'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('the failures are in the shared store under the key the API reads (one budget per address)', async () => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS, { maxRetriesPerRequest: 0 });
    try {
      const budget = createBudget({
        name: FAILURE_BUDGET_NAME,
        points: MAX,
        windowMs: 60_000,
        redis,
        namespace: storeNamespace(config.kafka.topicNamespace),
      });
      // Chromium reaches the edge from loopback; the API would count the same address.
      expect((await budget.exhausted('127.0.0.1')).exhausted).toBe(true);
      expect((await budget.exhausted('127.0.0.2')).exhausted).toBe(false);
    } finally {
      redis.disconnect();
    }
  });
});
