/**
 * The server seed every hash chain derives from (docs/decisions/rounds-and-fairness/0001-hash-chain-per-game-and-epoch.md):
 * ROUND_SERVER_SEED when set, else a 32-byte random seed created once in ROUND_SEED_FILE (mode
 * 0600, directory 0700) and reused on every later start, so the published commitments stay valid
 * across restarts. The seed is never logged.
 */

import type { Logger } from '../../lib/logger.ts';
import { loadOrCreateSecret } from '../../lib/secret-file.ts';
import type { EngineConfig } from './config.ts';

/**
 * The server seed as 32 bytes.
 * @returns whether it came from the setting, an existing file, or was just created.
 * @throws ConfigError when the seed file exists but does not hold 64 hex characters;
 *   file-system errors other than a missing file are passed on.
 */
export async function loadServerSeed(
  engine: Pick<EngineConfig['engine'], 'serverSeed' | 'seedFile'>,
  logger: Logger,
): Promise<{ seed: Buffer; source: 'config' | 'file' | 'created' }> {
  if (engine.serverSeed) return { seed: Buffer.from(engine.serverSeed, 'hex'), source: 'config' };
  const { secret, created } = await loadOrCreateSecret(engine.seedFile, 'ROUND_SEED_FILE', logger);
  if (created) logger.info({ file: engine.seedFile }, 'created a new server seed');
  return { seed: secret, source: created ? 'created' : 'file' };
}
