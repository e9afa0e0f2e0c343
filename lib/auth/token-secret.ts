/**
 * The token signing secret (32 bytes): AUTH_TOKEN_SECRET when set, else a random secret created
 * once in AUTH_TOKEN_SECRET_FILE (mode 0600, directory 0700) and reused, so every process on the
 * machine (API, edge, WebTransport edge) signs and verifies with the same key. In compose the
 * setting comes from the environment. The secret is never logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Config } from '../config.ts';
import { ConfigError } from '../errors.ts';

const HEX64 = /^[0-9a-f]{64}$/;

async function readSecretFile(file: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (!HEX64.test(text.trim()))
    throw new ConfigError(`AUTH_TOKEN_SECRET_FILE ${file}: expected 64 lower-case hex`);
  return Buffer.from(text.trim(), 'hex');
}

/**
 * @returns the 32-byte signing secret.
 * @throws ConfigError when the file exists but is malformed; other file-system errors are passed on.
 */
export async function loadTokenSecret(
  auth: Pick<Config['auth'], 'tokenSecret' | 'tokenSecretFile'>,
): Promise<Buffer> {
  if (auth.tokenSecret) return Buffer.from(auth.tokenSecret, 'hex');
  const existing = await readSecretFile(auth.tokenSecretFile);
  if (existing) return existing;
  await mkdir(dirname(auth.tokenSecretFile), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32);
  try {
    // 'wx': another process may have created it in the meantime; then use theirs.
    await writeFile(auth.tokenSecretFile, `${secret.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = await readSecretFile(auth.tokenSecretFile);
    if (raced) return raced;
    throw err;
  }
  return secret;
}
