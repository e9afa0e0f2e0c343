/**
 * The session API as one encapsulated fastify plugin: operators registry (admin),
 * request-access and the session endpoints (operator bearer), the player routes (player bearer).
 * Inside it, errors are RFC 7807 problem JSON (services/api/errors.ts problemForError, the same
 * status mapping as the rest of the API) and bodies are validated by the zod rules of input.ts
 * in the handlers, not by the app's coercing ajv. Outside the /api rate-limit scope: operators
 * and players are authenticated, and one gateway address would otherwise share one IP budget.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Producer } from 'kafkajs';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import { createBreakerReader } from '../../../lib/db/operator-breakers.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { createCallbackClient } from '../../../lib/http/callback-client.ts';
import { createBatchingAppender } from '../../../lib/log/batching-appender.ts';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import { currencyTable } from '../../../rules/money/currencies.ts';
import type { ApiConfig } from '../config.ts';
import { OperatorUnavailableError, problemForError } from '../errors.ts';
import { fetchOperatorBalance } from './balance.ts';
import { betRoute } from './bets.ts';
import { cashOutRoute } from './cash-out.ts';
import type { EngineClient } from './engine-client.ts';
import { operatorRoutes } from './operators.ts';
import { playRoutes } from './play.ts';
import { createReadinessGate } from './readiness.ts';
import { requestAccessRoute } from './request-access.ts';
import { roundRoute } from './round.ts';
import { sessionRoutes } from './sessions.ts';
import { walletCallbackRoutes } from './wallet-callbacks.ts';

export interface AccessDeps {
  readonly config: Pick<ApiConfig, 'kafka' | 'access' | 'money'>;
  /** Pool on the read-model schema (operators, access_sessions, free_bets, wallet read models). */
  readonly sql: Sql;
  /** Producer for `access-sessions` and `wallet-transactions` (idempotent, acks all). */
  readonly producer: Producer;
  /** The API-key table, for the admin routes. */
  readonly table: KeyLookup;
  /** Each game's round phase from the log (bets only in an open betting window). */
  readonly phases: RoundPhases;
  /** The round engine's cash-out decision. */
  readonly engine: EngineClient;
  /** Clock, Unix ms (tests). */
  readonly now?: () => number;
  /** The operator Balance callback (tests may point it elsewhere). */
  readonly fetchBalance?: typeof fetchOperatorBalance;
}

/** The plugin registering every route of services/api/access. */
export function accessRoutes(deps: AccessDeps): FastifyPluginAsync {
  const now = deps.now ?? Date.now;
  const fetchBalance = deps.fetchBalance ?? fetchOperatorBalance;
  const { sql, producer, config, table, phases, engine } = deps;
  // ISO 4217 + CRYPTO_CURRENCIES: every amount in and out of these routes uses its currency's exponent.
  const currencies = currencyTable(config.money.crypto);
  // The operators' circuit breakers, read through a 500 ms cache.
  const breakers = createBreakerReader(sql);
  // Readiness probes of operators, with their own keep-alive connections.
  const client = createCallbackClient(8);
  const readiness = createReadinessGate(sql, client, breakers);
  // Bets under load share produce requests (one producer allows one request in flight).
  const appender = createBatchingAppender(producer);
  return async (app) => {
    app.setValidatorCompiler(() => () => true);
    app.setErrorHandler((err, req, reply) => {
      const { status, body } = problemForError(err);
      if (err instanceof OperatorUnavailableError) reply.header('retry-after', String(err.retryAfterS));
      else if (status >= 500) req.log.error({ err }, 'session api request failed');
      return reply.code(status).type('application/problem+json').send(body);
    });
    app.addHook('onClose', async () => client.close());
    operatorRoutes(app, { sql, table, now, client });
    walletCallbackRoutes(app, { sql, table, now });
    requestAccessRoute(app, { config, sql, producer, now, currencies, readiness });
    sessionRoutes(app, { sql, now, currencies });
    playRoutes(app, { config, sql, producer, now, fetchBalance, currencies });
    betRoute(app, { config, sql, phases, now, currencies, breakers, appender });
    cashOutRoute(app, { sql, phases, engine, now, currencies });
    roundRoute(app, { sql, phases, now, currencies });
  };
}
