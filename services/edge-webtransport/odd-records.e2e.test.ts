/**
 * The WebTransport edge (Deno, as a process) against odd records appended straight to a real
 * `rounds` topic (tests/support/odd-rounds.ts), with headless Chromium: after a slot round 4 ids
 * ahead of the engine finished 10 minutes in the future, a round from year 0, a duplicate, a
 * conflicting duplicate and a round of a lower id, every later engine round reaches a session's
 * datagrams once and in order, and the refused records are counted by reason. The Deno edge runs
 * the same rounds source and hub as the Node edge (lib/stream).
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { topicName } from '../../lib/log/topics.ts';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import { oddScenario } from '../../tests/support/odd-rounds.ts';
import {
  BROWSER_ARGS,
  CHROMIUM,
  createWtTestBed,
  openSession,
  readMetric,
  receivedRounds,
  startWtEdge,
  type WtEdgeProcess,
  type WtTestBed,
  waitFor,
} from '../../tests/support/webtransport.ts';

let bed: WtTestBed;
let edge: WtEdgeProcess;
let quicPort = 0;
let httpPort = 0;
let browser: Browser;
let page: Page;

async function append(events: readonly RoundEvent[]): Promise<void> {
  await bed.producer.send({
    topic: topicName(bed.config, 'rounds'),
    acks: -1,
    messages: events.map((e) => ({ key: e.game_slug, value: encodeRoundEvent(e) })),
  });
}

beforeAll(async () => {
  bed = await createWtTestBed('t-wtodd-');
  edge = startWtEdge({ TOPIC_NAMESPACE: bed.ns, WT_DEV_CERT_DIR: bed.certDir, EDGE_DRAIN_MS: '200' });
  ({ quicPort, httpPort } = await edge.started);
  await waitFor('/ready', async () =>
    (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200 ? true : undefined,
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${httpPort}/health`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await edge?.kill();
  await bed?.close();
});

describe('WebTransport edge survives odd records of rounds', () => {
  it('delivers every later engine round once and in order; counts the refused records', async () => {
    await openSession(page, 'slot', `https://127.0.0.1:${quicPort}/wt?game=slot`, httpPort);
    const s = oddScenario('slot', 700);
    await append(s.all);
    const lastId = s.engine[8]?.round_id;
    const got = await waitFor(
      'the engine’s last slot round',
      async () => {
        const ids = (await receivedRounds(page, 'slot')).map(
          (r) => (JSON.parse(r.text) as { round_id: number }).round_id,
        );
        return ids.includes(lastId ?? 0) ? ids : undefined;
      },
      20_000,
    );
    expect(got).toEqual([
      ...s.engine.slice(0, 3).map((r) => r.round_id),
      s.odd.outOfOrder.round_id,
      ...s.engine.slice(3).map((r) => r.round_id),
    ]);
    for (const reason of ['future', 'past', 'duplicate', 'conflict'])
      expect(await readMetric(httpPort, 'edge_refused_rounds_total', `reason="${reason}"`), reason).toBe(1);
  });
});
