/**
 * lib/early-signals.ts, in real child processes (tests/support/slow-main.ts, whose modules "load" for
 * 4 s, so the SIGTERM sent when it says `loading` lands in that window even on a loaded machine):
 * a SIGTERM while loading is held and the process stops cleanly once started (exit 0); without the
 * preload the same SIGTERM kills it; a process that never takes the signal over exits 1 after
 * SHUTDOWN_TIMEOUT_MS. And scripts/start.sh preloads it for every Node service.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EARLY_SIGNALS_PRELOAD as PRELOAD, ROOT } from '../tests/support/processes.ts';

/** How long the stand-in main's modules "load", ms. */
const LOAD_MS = 4000;

/**
 * The stand-in wrote `started`, then `stopped`: compared as whole lines, since a log message may
 * contain those words.
 */
function expectStartedThenStopped(out: string): void {
  const lines = out.split('\n').map((l) => l.trim());
  expect(lines.indexOf('started'), out).toBeGreaterThan(-1);
  expect(lines.indexOf('started'), out).toBeLessThan(lines.indexOf('stopped'));
}

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly ms: number;
}

/** Runs the stand-in main with `preload` flags, sends SIGTERM as soon as it says `loading`. */
function runSignalledWhileLoading(
  preload: readonly string[],
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...preload, '--import', 'tsx', 'tests/support/slow-main.ts'], {
      cwd: ROOT,
      env: { ...process.env, SLOW_MAIN_LOAD_MS: String(LOAD_MS), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let sentAt = 0;
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!sentAt && out.includes('loading\n')) {
        sentAt = Date.now();
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal, out, ms: Date.now() - sentAt }));
  });
}

describe('early signals', () => {
  it('keep a SIGTERM that arrives while the modules load (event loop blocked) from killing: the service starts, stops, exits 0', async () => {
    const r = await runSignalledWhileLoading(PRELOAD);
    expect(r, r.out).toMatchObject({ code: 0, signal: null });
    expect(r.out).toContain('signal during start-up; stopping once started');
    expectStartedThenStopped(r.out);
  }, 30_000);

  it('hold a SIGTERM that reaches JavaScript before the main does, and hand it over to lib/lifecycle.ts', async () => {
    const r = await runSignalledWhileLoading(PRELOAD, { SLOW_MAIN_ASYNC: '1' });
    expect(r, r.out).toMatchObject({ code: 0, signal: null });
    const line = r.out.split('\n').find((l) => l.includes('signal during start-up'));
    // Held since the signal, about LOAD_MS before the main took it over.
    expect(JSON.parse(line ?? '{}').msAgo, r.out).toBeGreaterThanOrEqual(LOAD_MS / 2);
    expectStartedThenStopped(r.out);
  }, 30_000);

  it('are needed: without the preload the same SIGTERM kills the process', async () => {
    const r = await runSignalledWhileLoading([]);
    expect(r, r.out).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(r.out).not.toContain('stopped');
  }, 30_000);

  it('end a process that never takes the signal over with 1 after SHUTDOWN_TIMEOUT_MS', async () => {
    const r = await runSignalledWhileLoading(PRELOAD, {
      SLOW_MAIN_NO_LIFECYCLE: '1',
      SHUTDOWN_TIMEOUT_MS: '2000',
    });
    expect(r, r.out).toMatchObject({ code: 1, signal: null });
    expect(r.out).toContain('SIGTERM while loading, and no stop took it over within 2000 ms');
    expect(r.ms).toBeGreaterThanOrEqual(2000);
  }, 30_000);

  it('are preloaded by scripts/start.sh for every service, Node and Deno', () => {
    const script = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8').split('\n');
    const lines = script.filter((l) => /"exec node .*services\/[^/]+\/main\.ts"/.test(l));
    expect(lines.length).toBe(9);
    for (const l of lines) expect(l).toContain('--import ./lib/early-signals.ts --import tsx ');
    const deno = script.filter(
      (l) => l.includes('deno run') && l.includes('services/edge-webtransport/main.ts'),
    );
    expect(deno.length).toBe(1);
    expect(deno[0]).toContain('--preload ./lib/early-signals.ts ');
  });
});
