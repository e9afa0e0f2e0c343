/**
 * POST /api/portal/secret/rotate {overlap_s, force?} → {signing_secret, previous_valid_until}: a new
 * Standard Webhooks signing secret for the session's operator (lib/db/operator-config.ts
 * rotateSigningSecret), shown once. Until `previous_valid_until` every request to the operator
 * carries two signatures in webhook-signature (new and old, space-delimited), so its verifier may
 * switch to the new secret at any moment of the overlap. A rotation while a previous one's replaced
 * secret still signs is a 409 ROTATION_IN_PROGRESS naming until when (it would cut off an operator
 * still verifying with that secret), unless `force` drops that secret at once.
 */
import type { FastifyInstance } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import { rotateSigningSecret } from '../../../lib/db/operator-config.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { RotationInProgressError } from '../../../lib/errors.ts';
import { parseInput } from '../access/input.ts';
import { AuthError, ConflictError } from '../errors.ts';
import { requirePortal } from './guard.ts';
import { rotateBody } from './input.ts';
import { portalSchemas } from './schemas.ts';

/** Registers POST /api/portal/secret/rotate. */
export function portalSecretRoute(app: FastifyInstance, deps: { sql: Sql; budget: Budget }): void {
  const { sql } = deps;
  app.post('/api/portal/secret/rotate', { schema: portalSchemas.rotate }, async (req, reply) => {
    const s = await requirePortal({ sql, budget: deps.budget }, req, reply);
    const b = parseInput(rotateBody, req.body, 'body');
    const r = await rotateSigningSecret(sql, s.operator_id, b.overlap_s, Date.now(), {
      force: b.force === true,
    }).catch((err: unknown) => {
      if (err instanceof RotationInProgressError)
        throw new ConflictError('ROTATION_IN_PROGRESS', err.message, {
          previous_valid_until: new Date(err.previousValidUntil).toISOString(),
        });
      throw err;
    });
    if (!r) throw new AuthError(401, 'unknown', 'the operator of this portal session is disabled');
    req.log.info(
      { operator_id: s.operator_id, overlap_s: b.overlap_s, force: b.force === true },
      'signing secret rotated from the portal',
    );
    reply.header('cache-control', 'no-store');
    return {
      signing_secret: r.signingSecret,
      previous_valid_until: new Date(r.previousValidUntil).toISOString(),
    };
  });
}
