/**
 * A 32-byte secret kept in a file of its own (mode 0600, directory 0700), created once on first
 * use and reused on every later start: the round engine's server seed and the token signing
 * secret, when no setting supplies them. Several processes may start at once; the first to write
 * wins and the others read what it wrote. Secrets are never logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from './errors.ts';
import type { Logger } from './logger.ts';

const HEX64 = /^[0-9a-f]{64}$/;

async function readSecret(file: string, setting: string, logger?: Logger): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const hex = text.trim();
  if (!HEX64.test(hex)) throw new ConfigError(`${setting} ${file}: expected 64 lower-case hex characters`);
  if (logger && ((await stat(file)).mode & 0o077) !== 0)
    logger.warn({ file }, 'secret file is readable by group or others; chmod 600 it');
  return Buffer.from(hex, 'hex');
}

/**
 * The secret in `file`, created there (32 random bytes as hex) when the file does not exist.
 * @param setting the configuration name of the file, for error messages.
 * @throws ConfigError when the file exists but does not hold 64 lower-case hex characters;
 *   file-system errors other than a missing file are passed on.
 */
export async function loadOrCreateSecret(
  file: string,
  setting: string,
  logger?: Logger,
): Promise<{ secret: Buffer; created: boolean }> {
  const existing = await readSecret(file, setting, logger);
  if (existing) return { secret: existing, created: false };
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32);
  try {
    // 'wx': never overwrite a secret another process created in the meantime; use theirs.
    await writeFile(file, `${secret.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = await readSecret(file, setting, logger);
    if (raced) return { secret: raced, created: false };
    throw err;
  }
  return { secret, created: true };
}
