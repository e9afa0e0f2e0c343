import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/logger.ts';
import { loadServerSeed } from './seed.ts';

const logger = createLogger('test', 'silent');
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seed-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadServerSeed', () => {
  it('uses ROUND_SERVER_SEED when set and touches no file', async () => {
    const file = join(dir, 'seed');
    const r = await loadServerSeed({ serverSeed: 'ab'.repeat(32), seedFile: file }, logger);
    expect(r).toEqual({ seed: Buffer.alloc(32, 0xab), source: 'config' });
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('creates a 32-byte seed once (file 0600, directory created) and reuses it afterwards', async () => {
    const file = join(dir, 'nested', 'deeper', 'server-seed');
    const first = await loadServerSeed({ serverSeed: '', seedFile: file }, logger);
    expect(first.source).toBe('created');
    expect(first.seed).toHaveLength(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.seed.toString('hex'));
    const again = await loadServerSeed({ serverSeed: '', seedFile: file }, logger);
    expect(again).toEqual({ seed: first.seed, source: 'file' });
  });

  it('refuses a seed file that does not hold 64 hex characters, naming the setting', async () => {
    const file = join(dir, 'seed');
    await writeFile(file, 'not-a-seed\n', { mode: 0o600 });
    const p = loadServerSeed({ serverSeed: '', seedFile: file }, logger);
    await expect(p).rejects.toThrow(ConfigError);
    await expect(loadServerSeed({ serverSeed: '', seedFile: file }, logger)).rejects.toThrow(
      /ROUND_SEED_FILE/,
    );
  });
});
