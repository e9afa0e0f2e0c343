/**
 * The operator portal's REST API as one encapsulated fastify plugin (the pages are the console's,
 * console/): the admin route minting sign-in links, and /api/portal/* for the operator signed in
 * with one (a session cookie, CSRF header on writes, only that operator's data). Bodies and
 * queries are validated by the zod rules of input.ts in the handlers (the input policy of
 * services/api/input-policy.ts), not by the app's ajv. Errors of /api/portal/* are the /api form
 * (the root error handler); the admin route's are problem JSON like every /admin route. Outside
 * the /api per-IP request limit, like the session API: every route is authenticated, and failed
 * credentials spend the per-IP failure budget (limits.ts).
 */
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { Budget } from '../../../lib/auth/failure-budget.ts';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { createCallbackClient } from '../../../lib/http/callback-client.ts';
import { currencyTable } from '../../../rules/money/currencies.ts';
import type { ApiConfig } from '../config.ts';
import { problemForError } from '../errors.ts';
import { portalCallbackRoutes } from './callbacks.ts';
import { portalConformanceRoute } from './conformance.ts';
import { portalOverviewRoutes } from './overview.ts';
import { portalReconciliationRoute } from './reconciliation.ts';
import { portalSecretRoute } from './secret.ts';
import { portalLinkRoute, portalSessionRoutes } from './session.ts';
import { portalTestCallbackRoute } from './test-callback.ts';

export interface PortalDeps {
  readonly config: Pick<ApiConfig, 'access' | 'money'>;
  /** Pool on the read-model schema. */
  readonly sql: Sql;
  /** The API-key table, for the admin route. */
  readonly table: KeyLookup;
  /** The failed-credential budget (limits.ts createApiBudgets().authFailures). */
  readonly authFailures: Budget;
  /** Clock, Unix ms (tests). */
  readonly now?: () => number;
}

/** The plugin registering every route of services/api/portal. */
export function portalRoutes(deps: PortalDeps): FastifyPluginAsync {
  const now = deps.now ?? Date.now;
  const { sql, table, config } = deps;
  const budget = deps.authFailures;
  const currencies = currencyTable(config.money.crypto);
  return async (app) => {
    await app.register(fastifyCookie);
    app.setValidatorCompiler(() => () => true);
    // Probes, test callbacks and conformance runs, with their own keep-alive connections.
    const client = createCallbackClient(8);
    app.addHook('onClose', async () => client.close());
    const session = { sql, table, budget, publicBaseUrl: config.access.publicBaseUrl, now };
    await app.register(async (admin) => {
      admin.setErrorHandler((err, req, reply) => {
        const { status, body } = problemForError(err);
        if (status >= 500) req.log.error({ err }, 'portal link request failed');
        return reply.code(status).type('application/problem+json').send(body);
      });
      portalLinkRoute(admin, session);
    });
    portalSessionRoutes(app, session);
    portalOverviewRoutes(app, { sql, budget, client, now });
    portalCallbackRoutes(app, { sql, budget, now });
    portalTestCallbackRoute(app, { sql, budget, client });
    portalConformanceRoute(app, { sql, budget, client, currencies });
    portalSecretRoute(app, { sql, budget });
    portalReconciliationRoute(app, { sql, budget });
  };
}
