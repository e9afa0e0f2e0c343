/**
 * The server seed every hash chain derives from (docs/decisions.md "Provably fair rounds"):
 * ROUND_SERVER_SEED when set, else a 32-byte random seed created once in ROUND_SEED_FILE (mode
 * 0600, directory 0700) and reused on every later start, so the published commitments stay valid
 * across restarts. The seed is never logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Config } from '../../lib/config.ts';
import { ConfigError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';

const HEX64 = /^[0-9a-f]{64}$/;

async function readSeedFile(file: string, logger: Logger): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const hex = text.trim();
  if (!HEX64.test(hex))
    throw new ConfigError(`ROUND_SEED_FILE ${file}: expected 64 lower-case hex characters`);
  if (((await stat(file)).mode & 0o077) !== 0)
    logger.warn({ file }, 'server seed file is readable by group or others; chmod 600 it');
  return Buffer.from(hex, 'hex');
}

/**
 * The server seed as 32 bytes.
 * @returns whether it came from the setting, an existing file, or was just created.
 * @throws ConfigError when the seed file exists but does not hold 64 hex characters;
 *   file-system errors other than a missing file are passed on.
 */
export async function loadServerSeed(
  engine: Pick<Config['engine'], 'serverSeed' | 'seedFile'>,
  logger: Logger,
): Promise<{ seed: Buffer; source: 'config' | 'file' | 'created' }> {
  if (engine.serverSeed) return { seed: Buffer.from(engine.serverSeed, 'hex'), source: 'config' };
  const existing = await readSeedFile(engine.seedFile, logger);
  if (existing) return { seed: existing, source: 'file' };
  await mkdir(dirname(engine.seedFile), { recursive: true, mode: 0o700 });
  const seed = randomBytes(32);
  try {
    // 'wx': never overwrite a seed another process created in the meantime.
    await writeFile(engine.seedFile, `${seed.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = await readSeedFile(engine.seedFile, logger);
    if (raced) return { seed: raced, source: 'file' };
    throw err;
  }
  logger.info({ file: engine.seedFile }, 'created a new server seed');
  return { seed, source: 'created' };
}
