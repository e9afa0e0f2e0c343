/**
 * Headless Chromium for the browser tests and the WebTransport benchmark: Debian's `chromium`
 * (installed by `bash scripts/ensure-deps.sh --browser`), driven by playwright-core, never a
 * downloaded browser. The flags keep it off this machine's closed network (background networking,
 * component updates, sync) and let it run as root in a container (no sandbox, no GPU).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const BROWSER_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** @throws Error naming the install command when Debian's Chromium is missing. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: run bash scripts/ensure-deps.sh --browser`);
}

export interface BrowserSession {
  readonly ctx: BrowserContext;
  /** Closes the browser and removes its profile directory. */
  close(): Promise<void>;
}

/**
 * A headless browser with a fresh profile in a temporary directory, 1280 × 900 viewport.
 * @throws Error when Chromium is missing (assertChromium) or does not start.
 */
export async function launchBrowser(): Promise<BrowserSession> {
  assertChromium();
  const profile = mkdtempSync(join(tmpdir(), 'browser-e2e-profile-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...BROWSER_ARGS],
    viewport: { width: 1280, height: 900 },
  });
  return {
    ctx,
    async close() {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
