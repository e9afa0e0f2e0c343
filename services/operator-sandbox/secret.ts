/**
 * The Standard Webhooks secret the sandbox verifies callbacks with. Never a fixed development
 * value: SANDBOX_SIGNING_SECRET when set, else `whsec_` + base64 of 32 random bytes kept in
 * SANDBOX_SECRET_FILE (lib/secret-file.ts: created once, reused on every start). The script that
 * registers the sandbox as the platform's default operator calls this too, so both sides agree.
 *
 * The secret verified can be replaced while the sandbox runs (`VerifyingSecret`, admin route
 * PUT /_sandbox/signing-secret), as an operator does when the platform rotates its signing secret:
 * during the rotation's overlap every request carries a signature by the old and by the new
 * secret (Standard Webhooks: several space-delimited signatures, any one that matches is enough),
 * so requests verify before and after the switch.
 */

import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
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

/** Body of PUT /_sandbox/signing-secret: a Standard Webhooks secret, `whsec_` + base64 of 24..64 bytes. */
export const signingSecretBodySchema = z.strictObject({
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, 'must be whsec_ followed by the base64 of 24 to 64 bytes'),
});

/** The secret callbacks are verified with now: the configured one, or the one an admin put. */
export class VerifyingSecret {
  private webhook: Webhook;

  constructor(private readonly configured: string) {
    this.webhook = new Webhook(configured);
  }

  /** The verifier of the current secret. */
  get current(): Webhook {
    return this.webhook;
  }

  /** Verifies with `secret` (`whsec_…`, checked by `signingSecretBodySchema`) from now on. */
  replace(secret: string): void {
    this.webhook = new Webhook(secret);
  }

  /** Back to the configured secret. */
  reset(): void {
    this.webhook = new Webhook(this.configured);
  }
}
