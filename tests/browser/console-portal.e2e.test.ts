/**
 * The operator portal (/console/, console/README.md) in headless Chromium on the whole stack with the
 * wallet services (tests/support/console.ts): the sandbox registered as the operator signs in through
 * a portal link minted by the admin API, finds a win its win path failed and re-drives it, rotates its
 * signing secret while bets flow (no callback refused for its signature), sees a second rotation inside
 * the overlap refused with its reason and then forces it, sees a callback with more attempts than the
 * API returns say how many are shown, downloads the day's
 * reconciliation and finds it equal to its ledger, and runs the conformance kit; a second operator's
 * session sees nothing of the first's; an operator answer holding markup is shown as text; axe-core
 * finds no serious or critical violation on any portal page. CONSOLE_SCREENSHOTS=1 writes the README's
 * screenshots (docs/screenshots/).
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTEXT_OPTIONS,
  type ConsolePage,
  type ConsoleStack,
  type FakeOperator,
  gotoRoute,
  parseCsv,
  screenshot,
  seriousViolations,
  startConsoleStack,
  startFakeOperator,
} from '../support/console.ts';
import { waitFor } from '../support/poll.ts';
import { betOnFreshRound, expectSettled, join, rowsOf } from '../support/wallet-faults.ts';
import { ledger, type Player, setFaults } from '../support/wallet-players.ts';

/** What the stand-in operator B answers to everything: markup that must stay text. */
const INJECTED = '<img src=x onerror=alert(1)><script>window.__h5Injected = 1; alert(2)</script>';

let cs: ConsoleStack;
let portal: ConsolePage;
let fake: FakeOperator;
/** Every player the tests made for the sandbox operator. */
const players: Player[] = [];
/** The win the callbacks test re-drove (its attempts: failed ones, then a 200). */
let redrivenWin = 0;
/** The secret the rotation test made and switched the sandbox to. */
let rotatedSecret = '';

beforeAll(async () => {
  cs = await startConsoleStack({ roundSpeed: 10 });
  // A short first retry, then a long wait: a failed win shows its next retry far ahead, and only a
  // re-drive sends it again.
  await cs.stack.wallet.setOperator({ retryPolicy: { delaysMs: [500, 600_000], jitter: 0 } });
  fake = await startFakeOperator(INJECTED);
}, 180_000);

afterAll(async () => {
  if (cs) await setFaults(cs.stack.wallet.sandboxUrl, []).catch(() => {});
  await fake?.close();
  await cs?.close();
}, 60_000);

const opA = () => cs.stack.wallet.operatorId;

async function newPlayer(): Promise<Player> {
  const p = await join(cs.stack, 'double');
  players.push(p);
  return p;
}

/** The text of every cell (th and td) of the body rows of `table` (a data-testid), row by row. */
function tableCells(page: Page, testId: string): Promise<string[][]> {
  return page
    .getByTestId(testId)
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((r) => Array.from(r.querySelectorAll('th, td'), (td) => (td.textContent ?? '').trim())),
    );
}

/** tableCells once the table shows at least `min` body rows (the page loads its data after its heading). */
async function tableRows(page: Page, testId: string, min = 1): Promise<string[][]> {
  return waitFor(
    `${min} rows in ${testId}`,
    async () => {
      const rows = await tableCells(page, testId);
      return rows.length >= min ? rows : undefined;
    },
    15_000,
    200,
  );
}

/** Searches the callbacks page by player; returns the tx ids of the rows shown. */
async function searchByPlayer(page: Page, user: string): Promise<number[]> {
  await gotoRoute(page, '#/portal/callbacks', 'Callbacks');
  const form = page.getByRole('search', { name: 'Search callbacks' });
  await form.getByLabel('Player').fill(user);
  await form.getByRole('button', { name: 'Search' }).click();
  const rows = page.getByTestId('callbacks-table').locator('tbody tr[data-tx-id]');
  await waitFor('the search to show rows', async () => ((await rows.count()) > 0 ? true : undefined), 15_000);
  return await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-tx-id'))));
}

describe('operator portal', () => {
  it('an operator opens its portal link and lands on the overview with its readiness', async () => {
    portal = await cs.openPortal(opA());
    const { page } = portal;
    // The single-use token leaves the address bar once it became a session.
    expect(page.url()).not.toContain('portal-link=');
    await page.getByRole('heading', { level: 2, name: 'Readiness' }).waitFor({ timeout: 15_000 });
    // The sandbox was registered straight into the database: its first probe runs from the page.
    await page.getByRole('button', { name: 'Probe now' }).click();
    const checks = await tableRows(page, 'readiness-table');
    // Columns: Check, Method, Path, Result, Detail. The sandbox answers every probe.
    expect(checks.filter((c) => c[3] !== 'pass')).toEqual([]);
    expect(checks.map((c) => c[0]).join(' ')).toMatch(/balance/i);
    expect(((await page.getByTestId('readiness-status').textContent()) ?? '').startsWith('Ready')).toBe(true);
    expect((await page.getByTestId('breaker').textContent()) ?? '').toContain('closed');
    await page.getByTestId('callback-stats').waitFor({ timeout: 5_000 });
    // The session is a cookie the page's script cannot read.
    const cookies = await portal.ctx.cookies();
    expect(cookies.find((c) => c.name === 'portal_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    expect(await page.evaluate(() => document.cookie)).not.toContain('portal_session');
    expect(portal.errors).toEqual([]);
    // A link signs in once: opened again in another browser, it is refused.
    const link = await cs.portalLink(opA());
    for (const want of ['Overview', 'Operator portal sign-in']) {
      const other = await cs.browser.newContext(CONTEXT_OPTIONS);
      try {
        const p = await other.newPage();
        await p.goto(link);
        await p.getByRole('heading', { level: 1, name: want }).waitFor({ timeout: 15_000 });
        if (want !== 'Overview') await p.getByTestId('error').waitFor({ timeout: 5_000 });
      } finally {
        await other.close();
      }
    }
  });

  it('finds a win its win path failed, sees the failed attempts, and re-drives it to done', async () => {
    const { page } = portal;
    const w = cs.stack.wallet;
    const p = await newPlayer();
    let bets: number[] = [];
    let winTx = 0;
    await setFaults(w.sandboxUrl, [{ kind: 'win', mode: 'error500' }]);
    try {
      const [placed] = await betOnFreshRound(cs.stack, [p]);
      bets = placed?.txs ?? [];
      // The winning bet of the trio; its win is bet + 1.
      const won = await waitFor(
        'the trio settled with one winner',
        async () =>
          (await rowsOf(cs.stack, p.user)).find((r) => r.kind === 'bet' && r.round_status === 'won'),
        30_000,
        200,
      );
      winTx = won.tx_id + 1;
      // Two failed attempts (the first and its 500 ms retry), then a ten-minute wait.
      await waitFor(
        'two failed attempts of the win',
        async () => {
          const [n] = await w.sql<{ n: number }[]>`
            select count(*)::int as n from wallet_callback_attempts where tx_id = ${winTx} and response_status = 500`;
          return (n?.n ?? 0) >= 2 ? true : undefined;
        },
        30_000,
        200,
      );
      const shown = await searchByPlayer(page, p.user);
      expect(shown).toEqual(expect.arrayContaining([...bets, winTx]));
      await page
        .getByTestId('callbacks-table')
        .getByRole('link', { name: String(winTx), exact: true })
        .click();
      await page.getByRole('heading', { level: 1, name: `Callback ${winTx}` }).waitFor();
      const attempts = await tableRows(page, 'attempts-table', 2);
      // Columns: Attempt, At, Status, Class, Latency, Next retry, Error.
      for (const a of attempts) {
        expect(a[2]).toBe('500');
        expect(a[3]).not.toBe('');
      }
      // The last failure waits for its next retry, ten minutes ahead.
      expect(attempts.at(-1)?.[5]).toMatch(/UTC$/);
      const detail = (await page.getByTestId('attempt-1').textContent()) ?? '';
      expect(detail).toContain('webhook-signature');
      expect(detail).toContain(p.user);
      await screenshot(page, 'portal-callback-detail');
    } finally {
      await setFaults(w.sandboxUrl, []);
    }

    await searchByPlayer(page, p.user);
    const redrive = page.getByRole('button', { name: 'Re-drive selected' });
    expect(await redrive.isDisabled()).toBe(true);
    await page.getByRole('checkbox', { name: `Select ${winTx}` }).check();
    await redrive.click();
    await waitFor(
      'the re-drive result',
      async () =>
        ((await page.getByTestId('redrive-result').textContent()) ?? '').includes(String(winTx))
          ? true
          : undefined,
      15_000,
      200,
    );
    // The detail shows it done with a 200 attempt after the 500s.
    await gotoRoute(page, `#/portal/callbacks/${winTx}`, `Callback ${winTx}`);
    await waitFor(
      'the re-driven win done with a 200 attempt',
      async () => {
        await page.reload();
        await page.getByRole('heading', { level: 1, name: `Callback ${winTx}` }).waitFor();
        const rows = await tableRows(page, 'attempts-table', 2);
        const summary = (await page.getByTestId('callback-summary').textContent()) ?? '';
        return summary.includes('done') && rows.some((r) => r[2] === '200') ? true : undefined;
      },
      30_000,
      1_000,
    );
    await expectSettled(cs.stack, bets);
    const l = await ledger(w.sandboxUrl, p.user);
    expect(l.body.transactions.filter((t) => t.provider_tx_id === String(winTx))).toHaveLength(1);
    redrivenWin = winTx;
  });

  it('rotates the signing secret while bets flow: no callback is refused for its signature', async () => {
    const { page } = portal;
    const w = cs.stack.wallet;
    const betters = [await newPlayer(), await newPlayer()];
    const since = Date.now();
    let flowing = true;
    const placedTxs: number[] = [];
    const flow = (async () => {
      while (flowing) for (const p of await betOnFreshRound(cs.stack, betters)) placedTxs.push(...p.txs);
    })();
    // Awaited in `finally`; a rejection before that must not count as unhandled.
    flow.catch(() => {});
    try {
      await waitFor('bets flowing', () => (placedTxs.length >= 6 ? true : undefined), 30_000, 100);
      await gotoRoute(page, '#/portal/secret', 'Signing secret');
      await page.getByRole('spinbutton', { name: 'Overlap (minutes)' }).fill('5');
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const secret = ((await page.getByTestId('new-secret').textContent()) ?? '').match(
        /whsec_[A-Za-z0-9+/=]+/,
      )?.[0];
      expect(secret).toBeDefined();
      rotatedSecret = secret as string;
      expect((await page.getByTestId('previous-valid-until').textContent()) ?? '').not.toBe('');
      // Bets go on under both signatures, then the sandbox verifies with the new secret alone.
      const before = placedTxs.length;
      await waitFor(
        'more bets after the rotation',
        () => (placedTxs.length >= before + 6 ? true : undefined),
        30_000,
        100,
      );
      const sw = await fetch(`${w.sandboxUrl}/_sandbox/signing-secret`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secret }),
      });
      expect(sw.status, await sw.text()).toBe(204);
      const switched = placedTxs.length;
      await waitFor(
        'more bets after the switch',
        () => (placedTxs.length >= switched + 6 ? true : undefined),
        30_000,
        100,
      );
    } finally {
      flowing = false;
      await flow;
    }
    await expectSettled(cs.stack, placedTxs, 90_000);
    const refused = await w.sql<{ tx_id: string; response_status: number; response_body: string }[]>`
      select tx_id::text, response_status, response_body from wallet_callback_attempts
      where at >= ${since} and (response_status = 401 or response_body like '%INVALID_SIGNATURE%')`;
    expect(refused).toEqual([]);
    // Callbacks sent during the overlap carried two signatures (new and old), space-separated.
    const [two] = await w.sql<{ n: number }[]>`
      select count(*)::int as n from wallet_callback_attempts
      where at >= ${since} and request_headers->>'webhook-signature' like '% %'`;
    expect(two?.n ?? 0).toBeGreaterThan(0);
    const rows = await rowsOf(
      cs.stack,
      betters.map((p) => p.user),
    );
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
  });

  it('a second rotation inside the overlap is refused with its reason; forced, it makes a new secret', async () => {
    const { page } = portal;
    const w = cs.stack.wallet;
    // The previous test's rotation is at most its 180 s timeout old: its 5 min overlap still runs.
    await gotoRoute(page, '#/portal/overview', 'Overview');
    await gotoRoute(page, '#/portal/secret', 'Signing secret');
    const force = page.getByRole('checkbox', {
      name: 'Replace the previous secret now, even if its overlap has not ended (force)',
    });
    expect(await force.isChecked()).toBe(false);
    const warning = page.getByTestId('force-warning');
    expect(await force.getAttribute('aria-describedby')).toBe(await warning.getAttribute('id'));
    expect((await warning.textContent()) ?? '').toContain('already uses the newest secret');
    await page.getByRole('spinbutton', { name: 'Overlap (minutes)' }).fill('5');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const error = page.getByTestId('error');
    await error.waitFor({ timeout: 15_000 });
    const refusal = (await error.textContent()) ?? '';
    expect(refusal).toMatch(/valid until \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/);
    expect(refusal).toContain('force');
    expect(refusal).toContain('(HTTP 409)');
    expect(await page.getByTestId('new-secret').count()).toBe(0);
    // Refused: the operator still has the secret the sandbox verifies with.
    const [row] = await w.sql<{ signing_secret: string }[]>`
      select signing_secret from operators where operator_id = ${opA()}`;
    expect(row?.signing_secret).toBe(rotatedSecret);

    await force.check();
    const forcedAt = Date.now();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await waitFor(
      "the forced rotation's new secret",
      async () =>
        (
          (await page
            .getByTestId('new-secret')
            .textContent()
            .catch(() => null)) ?? ''
        ).match(/whsec_[A-Za-z0-9+/=]+/)?.[0],
      15_000,
      200,
    );
    expect(secret).not.toBe(rotatedSecret);
    expect(await error.count()).toBe(0);
    expect((await page.getByTestId('previous-valid-until').textContent()) ?? '').not.toBe('');
    // The sandbox verifies with the newest secret once the saga has picked it up (its operator cache
    // lives at most 5 s; the operator guide asks for 10 s), and callbacks still pass.
    await new Promise((r) => setTimeout(r, 10_000));
    const sw = await fetch(`${w.sandboxUrl}/_sandbox/signing-secret`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret }),
    });
    expect(sw.status, await sw.text()).toBe(204);
    rotatedSecret = secret;
    const p = await newPlayer();
    const placed = await betOnFreshRound(cs.stack, [p]);
    await expectSettled(
      cs.stack,
      placed.flatMap((x) => x.txs),
      90_000,
    );
    const refused = await w.sql<{ tx_id: string }[]>`
      select tx_id::text from wallet_callback_attempts
      where at >= ${forcedAt} and (response_status = 401 or response_body like '%INVALID_SIGNATURE%')`;
    expect(refused).toEqual([]);
    expect((await rowsOf(cs.stack, p.user)).filter((r) => r.status !== 'succeeded')).toEqual([]);
    expect(portal.errors).toEqual([]);
  });

  it('a callback with more attempts than the API returns says how many the page shows', async () => {
    const { page } = portal;
    const w = cs.stack.wallet;
    expect(redrivenWin).toBeGreaterThan(0);
    // 120 more recorded attempts (two days old, so the overview's last hour is unchanged), as a
    // callback re-driven again and again would have.
    await w.sql`
      insert into wallet_callback_attempts
        (tx_id, attempt, operator_id, at, response_status, response_body, latency_ms, class, code, error)
      select ${redrivenWin}, m.last + g, ${opA()}, ${Date.now() - 2 * 86_400_000}, 503, 'busy', 5,
             'failed', 'HTTP_503', 'HTTP 503'
      from (select max(attempt) as last from wallet_callback_attempts where tx_id = ${redrivenWin}) m,
           generate_series(1, 120) g`;
    const [n] = await w.sql<{ total: number; last: number }[]>`
      select count(*)::int as total, max(attempt)::int as last from wallet_callback_attempts
      where tx_id = ${redrivenWin}`;
    const total = n?.total ?? 0;
    expect(total).toBeGreaterThan(120);
    await gotoRoute(page, `#/portal/callbacks/${redrivenWin}`, `Callback ${redrivenWin}`);
    const shown = page.getByTestId('attempts-shown');
    await shown.waitFor({ timeout: 15_000 });
    expect((await shown.textContent()) ?? '').toContain(`Showing the last 100 of ${total} attempts`);
    const rows = await tableRows(page, 'attempts-table', 100);
    expect(rows).toHaveLength(100);
    // The newest, oldest first.
    expect(rows.at(-1)?.[0]).toBe(String(n?.last));
    expect(rows[0]?.[0]).toBe(String((n?.last ?? 0) - 99));
    // A callback with all its attempts shown has no such line. Its answer held back for a second,
    // the page shows neither the previous callback's attempts nor its line under the new heading
    // (seen before the page was remounted per callback: the old data stayed until the new came).
    const [few] = await w.sql<{ tx_id: number; n: number }[]>`
      select tx_id::int, count(*)::int as n from wallet_callback_attempts where operator_id = ${opA()}
      group by tx_id having count(*) between 1 and 100 limit 1`;
    expect(few).toBeDefined();
    const held = `**/api/portal/callbacks/${few?.tx_id}`;
    await page.route(held, async (route) => {
      await new Promise((r) => setTimeout(r, 1_000));
      await route.continue();
    });
    try {
      const url = new URL(page.url());
      url.hash = `#/portal/callbacks/${few?.tx_id}`;
      await page.goto(url.toString());
      await page.getByRole('heading', { level: 1, name: `Callback ${few?.tx_id}` }).waitFor();
      expect(await page.getByTestId('attempts-shown').count()).toBe(0);
      expect(await page.getByTestId('attempts-table').count()).toBe(0);
    } finally {
      await page.unroute(held);
    }
    const fewRows = await tableRows(page, 'attempts-table', 1);
    expect(fewRows).toHaveLength(few?.n ?? -1);
    expect(await page.getByTestId('attempts-shown').count()).toBe(0);
  });

  it("downloads the day's reconciliation CSV and it matches the sandbox ledger", async () => {
    const { page } = portal;
    const w = cs.stack.wallet;
    const date = new Date().toISOString().slice(0, 10);
    await gotoRoute(page, '#/portal/reconciliation', 'Reconciliation');
    await page.getByLabel('Date').fill(date);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByTestId('reconciliation-table').locator('tbody tr').first().waitFor({ timeout: 15_000 });
    await screenshot(page, 'portal-reconciliation', { fullPage: false });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`reconciliation-${opA()}-${date}.csv`);
    const csv = parseCsv(readFileSync((await download.path()) as string, 'utf8'));
    const byTx = new Map(csv.map((r) => [r.tx_id, r]));
    let movements = 0;
    for (const p of players) {
      const l = await ledger(w.sandboxUrl, p.user);
      // Each movement of the ledger is a row of the file, booked, with its amount.
      for (const t of l.body.transactions) {
        movements++;
        const row = byTx.get(t.provider_tx_id);
        expect(
          row && [row.user_id, Number(row.amount_minor), row.state, row.currency],
          `ledger tx ${t.provider_tx_id}`,
        ).toEqual([p.user, t.amount_minor, 'booked', 'USD']);
      }
      // And each row of the player is a movement of the ledger: nothing booked the operator lacks,
      // nothing left outstanding.
      const ids = new Set(l.body.transactions.map((t) => t.provider_tx_id));
      const rows = csv.filter((x) => x.user_id === p.user);
      expect(
        rows.filter((r) => !ids.has(r.tx_id ?? '')).map((r) => `${r.tx_id} ${r.kind} ${r.state}`),
      ).toEqual([]);
      expect(rows).toHaveLength(ids.size);
    }
    expect(movements).toBeGreaterThan(0);
  });

  it('runs the conformance kit from the page: every row passed', async () => {
    const { page } = portal;
    await gotoRoute(page, '#/portal/conformance', 'Conformance');
    await page.getByRole('button', { name: 'Run conformance kit' }).click();
    await page.getByTestId('conformance-result').waitFor({ timeout: 90_000 });
    await waitFor(
      'the conformance result',
      async () =>
        ((await page.getByTestId('conformance-result').textContent()) ?? '').trim() !== '' ? true : undefined,
      90_000,
      250,
    );
    const rows = await tableRows(page, 'conformance-table');
    // Columns: Check, Result, Detail, Exchanges.
    const failed = rows.filter((r) => r[1] !== 'pass');
    expect(failed).toEqual([]);
    expect(((await page.getByTestId('conformance-result').textContent()) ?? '').trim()).toBe('Passed');
    await screenshot(page, 'portal-conformance');
  });
});

describe('a second operator', () => {
  let b: ConsolePage;
  let bId: string;

  beforeAll(async () => {
    const r = await cs.admin<{ operator_id: string }>('POST', '/admin/operators', {
      name: 'Operator B',
      callback_form: 'A',
      base_url: fake.url,
      timeout_ms: 2_000,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    bId = r.body.operator_id;
    b = await cs.openPortal(bId);
  }, 60_000);

  it("sees nothing of the first operator's callbacks: its pages show none and the API answers 404", async () => {
    const { page } = b;
    const a = players[0] as Player;
    const aTxs = (await rowsOf(cs.stack, a.user)).map((r) => r.tx_id);
    expect(aTxs.length).toBeGreaterThan(0);
    await gotoRoute(page, '#/portal/callbacks', 'Callbacks');
    const form = page.getByRole('search', { name: 'Search callbacks' });
    await form.getByLabel('Player').fill(a.user);
    await form.getByRole('button', { name: 'Search' }).click();
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('callbacks-table').locator('tbody tr[data-tx-id]').count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toContain(a.user);
    // With B's cookie, A's transactions are missing, exactly as an unknown one is.
    const statuses = await page.evaluate(
      (ids) =>
        Promise.all(
          ids.map(
            async (id) => (await fetch(`/api/portal/callbacks/${id}`, { credentials: 'same-origin' })).status,
          ),
        ),
      [...aTxs, 999_999_999],
    );
    expect(statuses).toEqual([...aTxs, 999_999_999].map(() => 404));
    // A's page of one of its transactions shows the error, not the transaction.
    await gotoRoute(page, `#/portal/callbacks/${aTxs[0]}`, /Callback/);
    await page.getByTestId('error').waitFor({ timeout: 10_000 });
    expect(await page.locator('main').textContent()).not.toContain(a.user);
    // B's reconciliation of today holds none of A's.
    const date = new Date().toISOString().slice(0, 10);
    const rec = await page.evaluate(
      async (d) => (await fetch(`/api/portal/reconciliation?date=${d}&format=json`)).json(),
      date,
    );
    expect(rec).toMatchObject({ operator_id: bId, transactions: [] });
  });

  it('shows an operator answer holding markup as text: no dialog, no element injected', async () => {
    const { page } = b;
    await gotoRoute(page, '#/portal/callbacks', 'Callbacks');
    await page.getByRole('button', { name: 'Send test callback' }).click();
    const result = page.getByTestId('test-callback-result');
    await waitFor(
      'the test callback answer shown',
      async () => (((await result.textContent()) ?? '').includes('onerror=alert(1)') ? true : undefined),
      15_000,
      200,
    );
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(await result.textContent()).toContain(INJECTED);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(
      await page.evaluate(() => (window as unknown as { __h5Injected?: number }).__h5Injected),
    ).toBeUndefined();
    // The overview shows the same answer in its readiness details, as text too.
    await gotoRoute(page, '#/portal/overview', 'Overview');
    await page.getByRole('button', { name: 'Probe now' }).click();
    await page.waitForLoadState('networkidle');
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(b.dialogs).toEqual([]);
    expect(b.errors).toEqual([]);
  });
});

describe('accessibility', () => {
  it('axe-core finds no serious or critical violation on any portal page', async () => {
    const { page } = portal;
    const [tx] = (await rowsOf(cs.stack, (players[0] as Player).user)).map((r) => r.tx_id);
    const pages: [string, string | RegExp][] = [
      ['#/portal/overview', 'Overview'],
      ['#/portal/callbacks', 'Callbacks'],
      [`#/portal/callbacks/${tx}`, `Callback ${tx}`],
      ['#/portal/conformance', 'Conformance'],
      ['#/portal/secret', 'Signing secret'],
      ['#/portal/settings', 'Settings'],
      ['#/portal/reconciliation', 'Reconciliation'],
    ];
    const found: Record<string, unknown> = {};
    for (const [hash, heading] of pages) {
      await gotoRoute(page, hash, heading);
      await page.waitForLoadState('networkidle');
      const v = await seriousViolations(page);
      if (v.length > 0) found[hash] = v;
      // After every scenario, the overview has callbacks to show.
      if (hash === '#/portal/overview') await screenshot(page, 'portal-overview');
    }
    // The sign-in page of a visitor with no session.
    const anon = await cs.browser.newContext(CONTEXT_OPTIONS);
    try {
      const p = await anon.newPage();
      await p.goto(`${cs.base}/console/#/portal/overview`);
      await p
        .getByRole('heading', { level: 1, name: 'Operator portal sign-in' })
        .waitFor({ timeout: 15_000 });
      const v = await seriousViolations(p);
      if (v.length > 0) found['sign-in'] = v;
    } finally {
      await anon.close();
    }
    expect(found).toEqual({});
  });
});
