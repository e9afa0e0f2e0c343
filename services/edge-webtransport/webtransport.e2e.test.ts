/**
 * The Deno WebTransport edge as a process, against the real broker, with headless Chromium as
 * the client: rounds appended to a fresh `rounds` topic arrive as one
 * datagram each in the stream form; other paths and bad parameters are refused with a status
 * before any session (the browser sees the handshake fail; the status is read from the edge's
 * log and metrics); shutdown ends open sessions with code 1001.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Producer } from 'kafkajs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendKeyEvent } from '../../lib/auth/key-events.ts';
import { encodeRound } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import { type RoundFinished, toStreamForm } from '../../rules/rounds/round.ts';
import type { Config } from '../../tests/support/config.ts';
import { type TestKey, testKey } from '../../tests/support/credentials.ts';
import { syntheticRound } from '../../tests/support/rounds-fixture.ts';
import {
  BROWSER_ARGS,
  CHROMIUM,
  closeSession,
  createWtTestBed,
  openSession,
  parseLogLines,
  readMetric,
  receivedRounds,
  startWtEdge,
  tryOpen,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../../tests/support/webtransport.ts';
import { redactToken } from './route.ts';

let bed: WtTestBed;
let config: Config;
let producer: Producer;
let certDir: string;
let edge: WtEdgeProcess;
let quicPort = 0;
let httpPort = 0;
let browser: Browser;
let page: Page;
let seq = 0;
/** The edge's token signing secret, and keys on its `auth-keys` topic. */
const tokenSecret = randomBytes(32);
const streamAll = testKey({ scopes: ['stream:*'] });
const streamGame = testKey({ scopes: ['stream:game'] });
const revoked = testKey({ scopes: ['stream:*'] });
const tokenOf = (k: TestKey) => k.token(tokenSecret);

const logLines = () => parseLogLines(edge.output());

async function append(round: RoundFinished): Promise<{ before: number; after: number }> {
  const before = Date.now();
  await producer.send({
    topic: topicName(config, 'rounds'),
    messages: [{ key: round.game_slug, value: encodeRound(round) }],
  });
  return { before, after: Date.now() };
}

/** A fresh synthetic round of `game` (bench/lib.ts builds valid ones). */
function round(game: 'crash' | 'double' | 'slot'): RoundFinished {
  const k = { crash: 0, double: 1, slot: 2 }[game];
  seq += 1;
  return syntheticRound(k, seq, Date.now());
}

const metric = (name: string, labels: string) => readMetric(httpPort, name, labels);

/** Closes session `name` in the browser and waits until the edge has let it go. */
async function closeAndWait(name: string): Promise<void> {
  await closeSession(page, name);
  await waitFor('the edge to drop the session', async () =>
    (await metric('edge_subscribers', 'protocol="webtransport"')) === 0 ? true : undefined,
  );
}

beforeAll(async () => {
  bed = await createWtTestBed('t-wt-');
  ({ config, producer, certDir } = bed);
  for (const k of [streamAll, streamGame, revoked]) {
    await appendKeyEvent(producer, config, { type: 'KeyCreated', value: k.event });
  }
  await appendKeyEvent(producer, config, {
    type: 'KeyRevoked',
    value: { key_id: revoked.keyId, at: Date.now() },
  });

  edge = startWtEdge({
    TOPIC_NAMESPACE: bed.ns,
    WT_DEV_CERT_DIR: certDir,
    EDGE_DRAIN_MS: '200',
    // One session at a time, so the limit's refusal is testable; the tests close each session.
    WT_MAX_SESSIONS: '1',
    AUTH_TOKEN_SECRET: tokenSecret.toString('hex'),
  });
  ({ quicPort, httpPort } = await edge.started);
  await waitFor('/ready', async () =>
    (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200 ? true : undefined,
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  page = await browser.newPage();
  // 127.0.0.1 is a secure context, which WebTransport requires; the edge's origin serves the hash.
  await page.goto(`http://127.0.0.1:${httpPort}/health`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await edge?.kill();
  await bed?.close();
});

describe('WebTransport edge (Deno) with headless Chromium', () => {
  it('serves the certificate hash the browser needs, with CORS', async () => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/cert-hash`);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await res.json()) as Record<string, string>;
    const x509 = new X509Certificate(readFileSync(join(certDir, 'cert.pem')));
    const digest = createHash('sha256').update(x509.raw).digest();
    expect(body).toEqual({
      algorithm: 'sha-256',
      hash: digest.toString('base64'),
      hex: digest.toString('hex'),
      expires_at: new Date(x509.validTo).toISOString(),
      source: 'development',
    });
  });

  it('delivers each round of the chosen game as one stream-form datagram, and nothing else', async () => {
    await openSession(
      page,
      'game',
      `https://127.0.0.1:${quicPort}/wt?game=crash&token=${tokenOf(streamAll)}`,
      httpPort,
    );
    expect(await metric('edge_subscribers', 'protocol="webtransport"')).toBe(1);
    const other = round('double');
    const first = round('crash');
    await append(other);
    const t1 = await append(first);
    await waitFor(
      'the first crash datagram',
      async () => ((await receivedRounds(page, 'game')).length >= 1 ? true : undefined),
      20_000,
    );
    const second = round('crash');
    const t2 = await append(second);
    const got = await waitFor(
      'two crash datagrams',
      async () => {
        const r = await receivedRounds(page, 'game');
        return r.length >= 2 ? r : undefined;
      },
      20_000,
    );
    expect(got).toHaveLength(2);
    for (const [i, [sent, t]] of [
      [first, t1],
      [second, t2],
    ].entries() as Iterable<[number, [RoundFinished, { before: number; after: number }]]>) {
      const { text, bytes } = got[i] as { text: string; bytes: number };
      const msg = JSON.parse(text) as Record<string, unknown>;
      expect(msg).toEqual({ ...toStreamForm(sent, 0), timestamp: msg.timestamp });
      expect(msg.timestamp).toBeGreaterThanOrEqual(t.before);
      expect(msg.timestamp).toBeLessThanOrEqual(t.after);
      expect(bytes).toBeLessThan(1200);
    }
    expect(await metric('edge_deliveries_total', 'protocol="webtransport"')).toBe(2);
    await closeAndWait('game');
  });

  it('a type subscription gets every game of the type, reporting the subscribed type', async () => {
    await openSession(page, 'multi', `https://127.0.0.1:${quicPort}/wt?type=multiplier`, httpPort);
    const slot = round('slot');
    const crash = round('crash');
    await append(round('double'));
    await append(slot);
    await append(crash);
    const got = await waitFor(
      'slot and crash datagrams',
      async () => {
        const r = await receivedRounds(page, 'multi');
        return r.length >= 2 ? r : undefined;
      },
      20_000,
    );
    const byGame = new Map(
      got.map((g) => JSON.parse(g.text) as Record<string, unknown>).map((m) => [m.game_slug, m]),
    );
    expect([...byGame.keys()].sort()).toEqual(['crash', 'slot']);
    expect(byGame.get('slot')).toMatchObject({ round_id: slot.round_id, game_type: 'multiplier' });
    expect(byGame.get('crash')).toMatchObject({ round_id: crash.round_id, game_type: 'multiplier' });
    await closeAndWait('multi');
  });

  it('refuses a session beyond WT_MAX_SESSIONS with 503', async () => {
    await openSession(page, 'only', `https://127.0.0.1:${quicPort}/wt?game=slot`, httpPort);
    const before = await metric('edge_wt_session_requests_total', 'status="503"');
    expect(await tryOpen(page, `https://127.0.0.1:${quicPort}/wt?game=crash`, httpPort)).toMatch(
      /^refused: /,
    );
    expect(await metric('edge_wt_session_requests_total', 'status="503"')).toBe(before + 1);
    await closeAndWait('only');
    expect(await tryOpen(page, `https://127.0.0.1:${quicPort}/wt?game=crash`, httpPort)).toBe('open');
    await waitFor('the probe session to close', async () =>
      (await metric('edge_subscribers', 'protocol="webtransport"')) === 0 ? true : undefined,
    );
  });

  it.each([
    ['/other?game=crash', 404, 'Not found'],
    ['/wt', 400, 'A game or type query parameter is required'],
    ['/wt?game=crash&type=color', 400, 'Give either game or type, not both'],
    ['/wt?game=Crash!', 400, 'Invalid game slug'],
    ['/wt?game=poker', 404, 'Game not found'],
    ['/wt?type=poker', 404, 'Game type not found'],
    ['/wt?type=multiplier&type=color', 400, 'game, type and token may each be given once'],
    ['/wt?game=crash&token=tok_00', 401, 'Unauthorized (malformed)'],
    [`/wt?game=crash&token=${`sk_live_${'0'.repeat(64)}`}`, 401, 'Unauthorized (unknown)'],
    // <revoked> and <stream:game> become fresh tokens when the row runs (they live 15 s).
    ['/wt?game=crash&token=<revoked>', 401, 'Unauthorized (revoked)'],
    ['/wt?type=multiplier&token=<stream:game>', 403, 'Forbidden (scope)'],
  ])('refuses %s with %i before any session', async (row, status, error) => {
    const path = row.replace('<revoked>', tokenOf(revoked)).replace('<stream:game>', tokenOf(streamGame));
    const before = await metric('edge_wt_session_requests_total', `status="${status}"`);
    // The credential never reaches the log, so several rows log the same path.
    const refusals = () =>
      logLines().filter((l) => l.msg === 'session refused' && l.path === redactToken(path));
    const seen = refusals().length;
    // A page of its own: Chromium throttles WebTransport handshakes after failed ones per page
    // (each refusal counts as pending for a while), which would slow every later row.
    const own = await browser.newPage();
    await own.goto(`http://127.0.0.1:${httpPort}/health`);
    const outcome = await tryOpen(own, `https://127.0.0.1:${quicPort}${path}`, httpPort);
    await own.close();
    expect(outcome).toMatch(/^refused: /);
    const line = await waitFor('the refusal in the log', () => refusals()[seen]);
    expect(line).toMatchObject({ status, error });
    const credential = new URLSearchParams(path.split('?')[1]).get('token');
    if (credential) expect(edge.output()).not.toContain(credential);
    expect(await metric('edge_wt_session_requests_total', `status="${status}"`)).toBe(before + 1);
    expect(await metric('edge_subscribers', 'protocol="webtransport"')).toBe(0);
  });

  it('closes a session when its key is revoked (1008), within a second', async () => {
    const victim = testKey({ scopes: ['stream:game'] });
    await appendKeyEvent(producer, config, { type: 'KeyCreated', value: victim.event });
    // The edge's key table follows the topic within ~100 ms; retry until the key is known.
    await waitFor('the key to be accepted', async () => {
      const url = `https://127.0.0.1:${quicPort}/wt?game=crash&token=${tokenOf(victim)}`;
      return (await tryOpen(page, url, httpPort)) === 'open' ? true : undefined;
    });
    await waitFor('the probe session to close', async () =>
      (await metric('edge_subscribers', 'protocol="webtransport"')) === 0 ? true : undefined,
    );
    await openSession(
      page,
      'victim',
      `https://127.0.0.1:${quicPort}/wt?game=crash&token=${tokenOf(victim)}`,
      httpPort,
    );
    const at = Date.now();
    await appendKeyEvent(producer, config, { type: 'KeyRevoked', value: { key_id: victim.keyId, at } });
    // Within a second of the revocation being on the log (the append's own ack is not the edge's).
    const onLog = Date.now();
    const closed = await page.evaluate(
      () => (window as unknown as { wt: Record<string, { closed: Promise<unknown> }> }).wt.victim?.closed,
    );
    expect(Date.now() - onLog).toBeLessThan(1_000);
    expect(closed).toEqual({ closeCode: 1008, reason: 'credential revoked' });
    await waitFor('the edge to drop the session', async () =>
      (await metric('edge_subscribers', 'protocol="webtransport"')) === 0 ? true : undefined,
    );
  });

  it('on SIGTERM ends open sessions with 1001 and exits 0', async () => {
    await openSession(page, 'last', `https://127.0.0.1:${quicPort}/wt?game=double`, httpPort);
    edge.child.kill('SIGTERM');
    const closed = await page.evaluate(
      () => (window as unknown as { wt: Record<string, { closed: Promise<unknown> }> }).wt.last?.closed,
    );
    expect(closed).toEqual({ closeCode: 1001, reason: 'edge shutting down' });
    expect(await edge.exited).toBe(0);
  });
});
