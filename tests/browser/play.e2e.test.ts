/**
 * The player game page (public/play/) in headless Chromium, reached through the
 * game_url of real sessions on the whole stack with the wallet services (tests/browser/stack.ts,
 * `wallet: true`): the balance from the operator's Balance callback, a live round arriving over
 * SSE, a bet placed through the form and followed until settled with the balance moving by the
 * stake and the payout; a demo session betting its virtual balance with no callback to the
 * operator; and the game URL refused with a clear "link already used" when opened again.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertChromium, type BrowserSession, launchBrowser } from '../support/chromium.ts';
import { waitFor } from '../support/poll.ts';
import { ledger, requestAccess } from '../support/wallet-players.ts';
import { type StackWithWallet, startStack } from './stack.ts';

const SHOTS = join(tmpdir(), 'casino-browser-shots');
const STAKE = 5;

let stack: StackWithWallet;
let browser: BrowserSession;
let ctx: BrowserContext;

beforeAll(async () => {
  assertChromium();
  mkdirSync(SHOTS, { recursive: true });
  // Double rounds of 3 s: a bet placed just after a round arrives lands well inside the next one.
  stack = await startStack({ wallet: true, roundSpeed: 5 });
  browser = await launchBrowser();
  ctx = browser.ctx;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 60_000);

async function gameUrl(body: Record<string, unknown>): Promise<string> {
  const r = await requestAccess(stack.base, stack.wallet.apiToken, body);
  expect(r.status).toBe(200);
  expect(r.body.game_url.startsWith(`${stack.base}/play/?launch=`)).toBe(true);
  return r.body.game_url;
}

async function openPage(url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { page, errors };
}

const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).textContent()) ?? '').trim();

/** The live round the page shows now: its id and result, read together. */
const liveRound = (page: Page) =>
  page.evaluate(() => ({
    round: document.getElementById('last-round')?.textContent ?? '',
    result: document.getElementById('last-result')?.textContent ?? '',
  }));

/** Waits for a round newer than the one shown, then submits the form; returns the bet's row. */
async function betOnNextRound(page: Page): Promise<{ tx: number; round: string }> {
  const shown = await text(page, '#last-round');
  await page.waitForFunction(
    (before) => {
      const now = document.getElementById('last-round')?.textContent ?? '–';
      return now !== '–' && now !== before;
    },
    shown,
    { timeout: 30_000 },
  );
  await page.fill('#amount', String(STAKE));
  await page.click('#place');
  const row = page.locator('#bets tr').first();
  await row.waitFor({ timeout: 10_000 });
  expect(await text(page, '#bet-error')).toBe('');
  return {
    tx: Number(await row.getAttribute('data-tx')),
    round: (await row.locator('td').nth(1).textContent()) ?? '',
  };
}

/** Waits until the bet's row shows won or lost and returns it. */
async function settledRow(page: Page, tx: number): Promise<{ outcome: string; result: string }> {
  const row = page.locator(`#bets tr[data-tx="${tx}"]`);
  await page.waitForFunction(
    (id) => {
      const tr = document.querySelector(`#bets tr[data-tx="${id}"]`);
      return tr !== null && ['won', 'lost', 'cancelled'].includes(tr.className);
    },
    tx,
    { timeout: 60_000 },
  );
  return {
    outcome: (await row.getAttribute('class')) ?? '',
    result: (await row.locator('td').nth(4).textContent()) ?? '',
  };
}

describe('player game page through game_url', () => {
  it('shows the operator balance and a live round, bets on double, and settles with the balance moved', async () => {
    const user = `web-${Date.now()}`;
    const url = await gameUrl({ game: 'double', user_id: user, username: 'Web Player', currency: 'USD' });
    const { page, errors } = await openPage(url);
    try {
      await page.locator('#player').waitFor({ state: 'visible', timeout: 15_000 });
      expect(await text(page, '#game-name')).toBe('double');
      expect(await text(page, '#username')).toBe('Web Player');
      await page.waitForFunction(() => document.getElementById('balance')?.textContent === '1000.00 USD');
      // The launch code is spent: it leaves the address bar.
      expect(new URL(page.url()).search).toBe('');
      await page.selectOption('#sel', 'red');
      const { tx, round } = await betOnNextRound(page);
      // The live round shown is a real round of the log, with its result.
      const live = await liveRound(page);
      const [shownRound] = await stack.wallet.sql<{ value: string }[]>`
        select value from rounds where game_slug = 'double' and round_id = ${live.round}`;
      expect(live.result).toBe(shownRound?.value);
      expect(['red', 'black', 'white']).toContain(live.result);
      expect(tx % 4).toBe(0);
      const { outcome, result } = await settledRow(page, tx);
      const [r] = await stack.wallet.sql<{ value: string }[]>`
        select value from rounds where game_slug = 'double' and round_id = ${round}`;
      expect(outcome).toBe(r?.value === 'red' ? 'won' : 'lost');
      const expected = outcome === 'won' ? 1000 - STAKE + 2 * STAKE : 1000 - STAKE;
      if (outcome === 'won') expect(result).toBe(`won ${2 * STAKE}`);
      await page.waitForFunction(
        (want) => document.getElementById('balance')?.textContent === want,
        `${expected.toFixed(2)} USD`,
        { timeout: 15_000 },
      );
      // The round close reaches the operator either way (round_close `zero-win`, the default: a lost
      // bet's win callback carries 0), possibly after the balance shown has moved.
      const l = await waitFor('the bet and its round close in the sandbox ledger', async () => {
        const r = await ledger(stack.wallet.sandboxUrl, user);
        return r.body.transactions.length >= 2 ? r : undefined;
      });
      expect(l.body.balance).toBe(expected.toFixed(2));
      expect(l.body.transactions.map((t) => [t.kind, t.amount_minor])).toEqual([
        ['bet', STAKE * 100],
        ['win', outcome === 'won' ? 2 * STAKE * 100 : 0],
      ]);
      expect(await text(page, '#status b')).toBe('Live');
      expect(errors).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'play-double.png'), fullPage: true });

      // A reload keeps the tab's player session (the URL no longer carries the code).
      await page.reload();
      await page.waitForFunction(
        (want) => document.getElementById('balance')?.textContent === want,
        `${expected.toFixed(2)} USD`,
      );
    } catch (err) {
      await page.screenshot({ path: join(SHOTS, 'play-double-failed.png'), fullPage: true });
      throw new Error(`${(err as Error).message}\n${stack.logs()}`);
    } finally {
      await page.close();
    }
  });

  it('a demo session plays crash with the virtual balance and makes no operator callback', async () => {
    const user = `demo-${Date.now()}`;
    const url = await gameUrl({ game: 'crash', user_id: user, username: 'Demo Player', demo: true });
    const { page, errors } = await openPage(url);
    try {
      await page.waitForFunction(
        () => document.getElementById('balance')?.textContent === '1000.00 USD',
        undefined,
        {
          timeout: 15_000,
        },
      );
      expect(await text(page, '#mode')).toMatch(/demo/);
      await page.fill('#sel', '1.50');
      const { tx, round } = await betOnNextRound(page);
      const { outcome } = await settledRow(page, tx);
      const [r] = await stack.wallet.sql<{ value: string }[]>`
        select value from rounds where game_slug = 'crash' and round_id = ${round}`;
      expect(outcome).toBe(Number(r?.value) >= 1.5 ? 'won' : 'lost');
      const expected = outcome === 'won' ? 1000 - STAKE + 1.5 * STAKE : 1000 - STAKE;
      await page.waitForFunction(
        (want) => document.getElementById('balance')?.textContent === want,
        `${expected.toFixed(2)} USD`,
        { timeout: 15_000 },
      );
      // No callback reached the operator: it has never seen this player.
      const l = await ledger(stack.wallet.sandboxUrl, user);
      expect(l.status).toBe(404);
      const rows = await stack.wallet.sql<{ demo: boolean }[]>`
        select demo from wallet_transactions where user_id = ${user}`;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((x) => x.demo)).toBe(true);
      expect(errors).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'play-demo-crash.png'), fullPage: true });
    } catch (err) {
      await page.screenshot({ path: join(SHOTS, 'play-demo-failed.png'), fullPage: true });
      throw new Error(`${(err as Error).message}\n${stack.logs()}`);
    } finally {
      await page.close();
    }
  });

  it('opening the same game_url a second time shows "link already used"', async () => {
    const url = await gameUrl({ game: 'slot', user_id: `twice-${Date.now()}`, username: 'Twice' });
    const first = await openPage(url);
    await first.page.locator('#player').waitFor({ state: 'visible', timeout: 15_000 });
    const second = await openPage(url);
    try {
      await second.page.waitForFunction(
        () => document.querySelector('#status b')?.textContent === 'Link already used',
        undefined,
        {
          timeout: 15_000,
        },
      );
      expect(await text(second.page, '#fatal')).toMatch(/already used/);
      expect(await second.page.locator('#player').isHidden()).toBe(true);
      expect(await second.page.locator('#betting').isHidden()).toBe(true);
      await second.page.screenshot({ path: join(SHOTS, 'play-link-used.png'), fullPage: true });
      // The first tab keeps playing.
      expect(await first.page.locator('#betting').isVisible()).toBe(true);
      expect(second.errors).toEqual([]);
    } finally {
      await first.page.close();
      await second.page.close();
    }
  });

  it('plays crash live: betting countdown, a rising multiplier, Cash out, and the outcome paid', async () => {
    const user = `pilot-${Date.now()}`;
    const url = await gameUrl({ game: 'crash', user_id: user, username: 'Pilot', currency: 'USD' });
    const { page, errors } = await openPage(url);
    const phase = () => text(page, '#phase');
    try {
      await page.waitForFunction(() => document.getElementById('balance')?.textContent === '1000.00 USD');
      await page.fill('#sel', '1000');
      // A round that busts at once leaves no time to cash out: try the next one.
      for (let attempt = 0; attempt < 6; attempt++) {
        await page.waitForFunction(
          () => document.getElementById('phase')?.textContent === 'Betting open',
          undefined,
          {
            timeout: 30_000,
          },
        );
        expect(await text(page, '#countdown')).toMatch(/^closes in \d+\.\d s$/);
        await page.fill('#amount', String(STAKE));
        await page.click('#place');
        const row = page.locator('#bets tr').first();
        await row.waitFor({ timeout: 10_000 });
        expect(await text(page, '#bet-error')).toBe('');
        const tx = Number(await row.getAttribute('data-tx'));
        await page.waitForFunction(
          () => document.getElementById('phase')?.textContent === 'Flying',
          undefined,
          {
            timeout: 30_000,
          },
        );
        // The multiplier rises frame by frame while the round flies.
        const first = Number.parseFloat(await text(page, '#flight'));
        await new Promise((r) => setTimeout(r, 250));
        const later = Number.parseFloat(await text(page, '#flight'));
        if ((await phase()) === 'Flying') expect(later).toBeGreaterThanOrEqual(first);
        if (await page.locator('#cash-out').isHidden()) continue; // already over
        await page.click('#cash-out', { timeout: 2000 }).catch(() => {});
        await page.waitForFunction(
          () => /Cashed out at|Crashed/.test(document.getElementById('cash-out-result')?.textContent ?? ''),
          undefined,
          { timeout: 10_000 },
        );
        const said = await text(page, '#cash-out-result');
        if (said.startsWith('Crashed')) continue;
        const m = /Cashed out at (\d+\.\d\d)x/.exec(said);
        const multiplier = Number(m?.[1]);
        expect(multiplier).toBeGreaterThanOrEqual(1);
        const { outcome, result } = await settledRow(page, tx);
        expect(outcome).toBe('won');
        // In whole cents, as the API pays (stake cents × multiplier cents / 100, rounded down): in
        // floating point 5 × 1.19 × 100 is 594.999…, one cent short.
        const win = Math.floor((STAKE * 100 * Math.round(multiplier * 100)) / 100) / 100;
        expect(result).toBe(`won ${win}`);
        const expected = (1000 - STAKE + win).toFixed(2);
        await page.waitForFunction(
          (want) => document.getElementById('balance')?.textContent === want,
          `${expected} USD`,
          { timeout: 15_000 },
        );
        const l = await ledger(stack.wallet.sandboxUrl, user);
        expect(l.body.balance).toBe(expected);
        expect(errors).toEqual([]);
        await page.screenshot({ path: join(SHOTS, 'play-crash-cash-out.png'), fullPage: true });
        return;
      }
      throw new Error('no crash round flew long enough to cash out by hand');
    } catch (err) {
      await page.screenshot({ path: join(SHOTS, 'play-crash-failed.png'), fullPage: true });
      throw new Error(`${(err as Error).message}\n${stack.logs()}`);
    } finally {
      await page.close();
    }
  });
});
