/**
 * Support of the console's browser tests (tests/browser/console-*.e2e.test.ts; not a test file):
 * the whole stack with the wallet services (tests/browser/stack.ts) and a known admin key, one
 * headless Chromium with a browser context (its own cookie jar) per operator or admin, the admin
 * REST calls the tests make around the pages (portal links, operator registration), a stand-in
 * operator whose every answer is a fixed body, axe-core run inside a page from node_modules, and
 * the README screenshots (docs/screenshots/, written when CONSOLE_SCREENSHOTS=1).
 *
 * The console's selectors (roles, accessible names, data-testids) are those of console/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { type StackWithWallet, startStack } from '../browser/stack.ts';
import { assertChromium, BROWSER_ARGS, CHROMIUM } from './chromium.ts';
import { ROOT } from './processes.ts';

/** axe-core's browser build, evaluated in the page from node_modules (never a CDN). */
export const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: string | undefined;
/** Where the README's screenshots of the console live. */
export const SCREENSHOT_DIR = join(ROOT, 'docs', 'screenshots');

/**
 * Options of every browser context of the tests: the README's viewport, downloads kept. The pages
 * run under the gateway's own Content-Security-Policy, as a browser of an operator runs them: axe-core
 * is evaluated through the DevTools protocol (page.evaluate), which the policy does not govern, not
 * added as a script tag, which it would block.
 */
export const CONTEXT_OPTIONS = {
  viewport: { width: 1280, height: 900 },
  acceptDownloads: true,
} as const;

/** A JSON answer of the API: status and parsed body (undefined when not JSON). */
export interface ApiReply<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

export interface ConsoleStack {
  readonly stack: StackWithWallet;
  /** The gateway's origin; the console is at `${base}/console/`. */
  readonly base: string;
  /** Secret of the stack's admin key (AUTH_ADMIN_KEY). */
  readonly adminKey: string;
  readonly browser: Browser;
  /** A request to the API with the admin key as bearer. */
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<ApiReply<T>>;
  /**
   * POST /admin/operators/:id/portal-link: the single-use link.
   * @throws Error with status and body when it is not 201.
   */
  portalLink(operatorId: string): Promise<string>;
  /**
   * A new browser context (its own cookies) signed in to the portal of `operatorId` through a fresh
   * link, on the overview. Dialogs are dismissed and counted in `dialogs`; page errors in `errors`.
   */
  openPortal(operatorId: string): Promise<ConsolePage>;
  /** A new browser context signed in to the ops console with the admin key, on the topics page. */
  openOps(): Promise<ConsolePage>;
  /** Closes the browser and stops the stack. */
  close(): Promise<void>;
}

export interface ConsolePage {
  readonly ctx: BrowserContext;
  readonly page: Page;
  /** Messages of every dialog (alert, confirm…) the page opened; each was dismissed. */
  readonly dialogs: string[];
  /** Uncaught errors of the page's scripts. */
  readonly errors: string[];
}

/**
 * Starts the stack (`wallet: true`, double rounds at ROUND_SPEED `roundSpeed`) with a fresh admin key
 * and launches Chromium.
 * @throws when Chromium is missing or the stack does not start (with every service's output).
 */
export async function startConsoleStack(
  options: { roundSpeed?: number; env?: Record<string, string> } = {},
): Promise<ConsoleStack> {
  assertChromium();
  const adminKey = `sk_live_${randomBytes(32).toString('hex')}`;
  const stack = await startStack({
    wallet: true,
    roundSpeed: options.roundSpeed ?? 10,
    env: { AUTH_ADMIN_KEY: adminKey, ...options.env },
  });
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...BROWSER_ARGS] });
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const base = stack.base;
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<ApiReply<T>> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T };
  };
  const portalLink = async (operatorId: string): Promise<string> => {
    const r = await admin<{ url: string }>('POST', `/admin/operators/${operatorId}/portal-link`, {});
    if (r.status !== 201) throw new Error(`portal-link ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.url;
  };
  const newPage = async (): Promise<ConsolePage> => {
    const ctx = await browser.newContext(CONTEXT_OPTIONS);
    const page = await ctx.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss().catch(() => {});
    });
    page.on('pageerror', (e) => errors.push(e.message));
    return { ctx, page, dialogs, errors };
  };
  return {
    stack,
    base,
    adminKey,
    browser,
    admin,
    portalLink,
    async openPortal(operatorId) {
      const p = await newPage();
      await p.page.goto(await portalLink(operatorId));
      await p.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 15_000 });
      return p;
    },
    async openOps() {
      const p = await newPage();
      await p.page.goto(`${base}/console/#/ops/topics`);
      await p.page.getByLabel('Admin key').fill(adminKey);
      await p.page.getByRole('button', { name: 'Sign in' }).click();
      await p.page.getByRole('heading', { level: 1, name: 'Topics' }).waitFor({ timeout: 15_000 });
      return p;
    },
    async close() {
      await browser?.close().catch(() => {});
      await stack.stop();
    },
  };
}

/** Goes to a console route (`#/portal/…`, `#/ops/…`) and waits for its level-1 heading. */
export async function gotoRoute(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  const url = new URL(page.url());
  url.hash = hash;
  await page.goto(url.toString());
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 });
  await page
    .getByRole('status')
    .filter({ hasText: 'Loading…' })
    .first()
    .waitFor({ state: 'detached', timeout: 15_000 })
    .catch(() => {});
}

/** One axe-core violation, with the selectors of the elements it names. */
export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

/**
 * Runs axe-core (WCAG rules, as shipped) on the page as it is now and returns the violations of
 * impact serious or critical.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    axeSource ??= readFileSync(AXE_SOURCE, 'utf8');
    await page.evaluate(axeSource);
  }
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, o: unknown): Promise<unknown> } }).axe;
    const r = (await axe.run(document, { resultTypes: ['violations'] })) as {
      violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
    };
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Writes a screenshot `docs/screenshots/<name>.png` when CONSOLE_SCREENSHOTS=1: the whole page, or
 * only the 1280 × 900 viewport with `fullPage: false` (a long table).
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: options.fullPage ?? true });
}

/** An HTTP server on 127.0.0.1 answering every request with status 200 and `body` as text/html. */
export interface FakeOperator {
  readonly url: string;
  /** Requests received: method and path. */
  readonly requests: { method: string; path: string }[];
  close(): Promise<void>;
}

/** Starts a FakeOperator (an operator whose answers are never what the contract asks). */
export async function startFakeOperator(body: string): Promise<FakeOperator> {
  const requests: { method: string; path: string }[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(body);
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

/**
 * Parses the reconciliation CSV (header row; fields quoted per RFC 4180 when they hold a comma, a
 * quote or a line break) into objects keyed by the header.
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...data] = rows;
  if (!header) return [];
  return data.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}
