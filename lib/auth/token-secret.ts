/**
 * The token signing secret (32 bytes): AUTH_TOKEN_SECRET when set, else a random secret created
 * once in AUTH_TOKEN_SECRET_FILE (mode 0600, directory 0700) and reused, so every process on the
 * machine (API, edge, WebTransport edge) signs and verifies with the same key. In compose the
 * setting comes from the environment. The secret is never logged.
 */
import type { SharedConfig } from '../config/shared.ts';
import { loadOrCreateSecret } from '../secret-file.ts';

/**
 * @returns the 32-byte signing secret.
 * @throws ConfigError when the file exists but is malformed; other file-system errors are passed on.
 */
export async function loadTokenSecret(
  auth: Pick<SharedConfig['auth'], 'tokenSecret' | 'tokenSecretFile'>,
): Promise<Buffer> {
  if (auth.tokenSecret) return Buffer.from(auth.tokenSecret, 'hex');
  return (await loadOrCreateSecret(auth.tokenSecretFile, 'AUTH_TOKEN_SECRET_FILE')).secret;
}
