/**
 * The Standard Webhooks secret the sandbox verifies callbacks with. Never a fixed development
 * value: SANDBOX_SIGNING_SECRET when set, else `whsec_` + base64 of 32 random bytes kept in
 * SANDBOX_SECRET_FILE (lib/secret-file.ts: created once, reused on every start). The script that
 * registers the sandbox as the platform's default operator calls this too, so both sides agree.
 */

import type { Logger } from '../../lib/logger.ts';
import { loadOrCreateSecret } from '../../lib/secret-file.ts';
import type { SandboxConfig } from './config.ts';

/**
 * The `whsec_…` secret of the sandbox.
 * @throws ConfigError when SANDBOX_SECRET_FILE exists but does not hold 64 hex characters.
 */
export async function resolveSigningSecret(
  sandbox: SandboxConfig['sandbox'],
  logger?: Logger,
): Promise<string> {
  if (sandbox.signingSecret !== '') return sandbox.signingSecret;
  const { secret, created } = await loadOrCreateSecret(sandbox.secretFile, 'SANDBOX_SECRET_FILE', logger);
  // The path only: the secret itself is never logged.
  if (created) logger?.info({ file: sandbox.secretFile }, 'created a new sandbox signing secret');
  return `whsec_${secret.toString('base64')}`;
}
