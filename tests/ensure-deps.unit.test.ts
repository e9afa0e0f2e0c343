/**
 * scripts/ensure-deps.sh installs for `npm start` only what the main job needs: a Compose
 * implementation (for tests/compose.e2e.test.ts) only with --compose, which scripts/test.sh passes.
 * Run on a PATH without docker and docker-compose whose apt-get is a stand-in that records its
 * arguments (and installs nothing); the broker is external (KAFKA_BROKERS), so no Java is asked for.
 */
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/processes.ts';

let dir: string;
let bin: string;
const calls = () => readFileSync(join(dir, 'apt-get.log'), 'utf8');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ensure-deps-'));
  bin = join(dir, 'bin');
  mkdirSync(bin);
  // Every command of PATH (Node 24's folder first, as the test runs), except Compose and apt-get.
  const hidden = new Set(['docker', 'docker-compose', 'apt-get']);
  for (const d of [dirname(process.execPath), ...(process.env.PATH ?? '').split(delimiter)]) {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (hidden.has(n)) continue;
      try {
        symlinkSync(join(d, n), join(bin, n));
      } catch {
        // The first folder of PATH wins, as it would.
      }
    }
  }
  writeFileSync(join(dir, 'apt-get.log'), '');
  writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\necho "$*" >> '${join(dir, 'apt-get.log')}'\n`, {
    mode: 0o755,
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function ensureDeps(...args: string[]) {
  writeFileSync(join(dir, 'apt-get.log'), '');
  const r = spawnSync('bash', ['scripts/ensure-deps.sh', ...args], {
    cwd: ROOT,
    env: { ...process.env, PATH: bin, KAFKA_BROKERS: '127.0.0.1:9' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return { stderr: r.stderr, apt: calls() };
}

describe('ensure-deps.sh without a Compose implementation', () => {
  it('installs none for npm start (no option)', () => {
    const { stderr, apt } = ensureDeps();
    expect(apt).not.toMatch(/compose/);
    expect(stderr).not.toMatch(/compose/i);
  }, 150_000);

  it('installs or names Debian\u2019s docker-compose with --compose (npm test)', () => {
    const { stderr, apt } = ensureDeps('--compose');
    expect(`${apt}\n${stderr}`).toMatch(/docker-compose/);
  }, 150_000);
});
