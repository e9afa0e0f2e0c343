import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { loadTokenSecret } from './token-secret.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tok-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('loadTokenSecret', () => {
  it('uses AUTH_TOKEN_SECRET when set', async () => {
    const hex = 'ab'.repeat(32);
    expect(
      (await loadTokenSecret({ tokenSecret: hex, tokenSecretFile: '/nonexistent/x' })).toString('hex'),
    ).toBe(hex);
  });

  it('creates the file once (mode 600) and reuses it', async () => {
    const file = join(tmp(), 'auth', 'token-secret');
    const a = await loadTokenSecret({ tokenSecret: '', tokenSecretFile: file });
    const b = await loadTokenSecret({ tokenSecret: '', tokenSecretFile: file });
    expect(a.length).toBe(32);
    expect(b.equals(a)).toBe(true);
    expect(readFileSync(file, 'utf8').trim()).toBe(a.toString('hex'));
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it('refuses a malformed file', async () => {
    const file = join(tmp(), 'secret');
    writeFileSync(file, 'not hex');
    await expect(loadTokenSecret({ tokenSecret: '', tokenSecretFile: file })).rejects.toThrow(ConfigError);
  });
});
