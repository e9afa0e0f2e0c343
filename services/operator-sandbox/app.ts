/**
 * The reference operator wallet as a fastify app: the callbacks of both forms
 * (callbacks.ts) on its own ledger (ledger.ts), answered as an operator of the configured answer
 * preset, strict or not (mode.ts, presets.ts); fault injection, quirks, the mode and reconciliation
 * reads under /_sandbox (admin.ts), /health, /ready and /metrics. The ledger's migrations
 * (services/operator-sandbox/migrations) are applied by the caller (main.ts, tests), as in the API.
 */
import { resolve } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { checkDatabase } from '../../lib/db/health.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { callbackSchemas } from '../../lib/http/callback-schemas.ts';
import { metricsRoute, observeHttpRequests } from '../../lib/http/metrics.ts';
import type { Logger } from '../../lib/logger.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import { registerAdmin } from './admin.ts';
import { CALLBACK_PATHS, registerCallbacks } from './callbacks.ts';
import type { SandboxConfig } from './config.ts';
import { replyForError, SandboxError } from './errors.ts';
import { FaultInjector } from './faults.ts';
import { createMetrics } from './metrics.ts';
import { Mode } from './mode.ts';
import { ledgerMoney } from './money.ts';
import { Quirks } from './quirks.ts';
import { resolveSigningSecret, VerifyingSecret } from './secret.ts';

/** The sandbox ledger's migration files. */
export const SANDBOX_MIGRATIONS_DIR = resolve(import.meta.dirname, 'migrations');

/** Request bodies above this are refused (413); callbacks are a few hundred bytes. */
const BODY_LIMIT_BYTES = 64 * 1024;
/** /ready fails when the ledger database does not answer `select 1` within this, ms. */
const READY_TIMEOUT_MS = 2_000;

export interface SandboxDeps {
  readonly config: SandboxConfig;
  /** A pool whose search_path is `config.sandbox.dbSchema` (createSandboxSql). */
  readonly sql: Sql;
  readonly logger: Logger;
  /** Uniform in [0, 1) for probabilistic fault rules (Math.random). */
  readonly random?: () => number;
}

/** A postgres.js pool bound to the sandbox's own schema rather than the platform's. */
export function createSandboxSql(config: SandboxConfig, options: { max?: number } = {}): Sql {
  return createSql({ db: { ...config.db, schema: config.sandbox.dbSchema } }, options);
}

/**
 * Builds the sandbox app (not listening). The signing secret comes from config or its file
 * (secret.ts). The instance's `faults` decorator is the live fault-rule set.
 * @throws ConfigError when the secret file is malformed, or SANDBOX_INITIAL_BALANCE does not fit a currency.
 */
export async function buildOperatorSandbox(deps: SandboxDeps): Promise<FastifyInstance> {
  const { config, sql, logger } = deps;
  const money = ledgerMoney(currencyTable(config.money.crypto), config.sandbox.initialBalance);
  const secret = new VerifyingSecret(await resolveSigningSecret(config.sandbox, logger));
  const faults = new FaultInjector(deps.random);
  const quirks = new Quirks();
  const mode = new Mode(config.sandbox.answerPreset, config.sandbox.strict);
  const metrics = createMetrics();
  const closing = new AbortController();

  const app = Fastify({
    loggerInstance: logger.child({ component: 'operator-sandbox' }) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
  });
  // Form B sends GET with a JSON body (docs/contract.md "Operator callbacks"); fastify ignores GET bodies unless told otherwise.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  // The signature covers the exact bytes sent, so the body stays a string; routes parse it.
  // Only application/json (contract); other types are 415 rather than a signature failure.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // A callback refused before its handler (413, 415) is answered in the preset; the admin routes' way.
  app.setErrorHandler((err, request, reply) =>
    replyForError(err, reply, CALLBACK_PATHS.has(request.url.split('?')[0] ?? '') ? mode.preset : undefined),
  );
  app.setNotFoundHandler((request, reply) =>
    replyForError(
      new SandboxError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
      reply,
    ),
  );
  observeHttpRequests(app, metrics.register);
  // Held (timeout/latency fault) requests must not keep close() waiting for a minute.
  app.addHook('preClose', async () => closing.abort());

  registerCallbacks(app, {
    sql,
    secret,
    faults,
    quirks,
    mode,
    schemas: callbackSchemas(),
    metrics,
    money,
    closing: closing.signal,
  });
  registerAdmin(app, { sql, faults, quirks, mode, secret, currencies: money.currencies });

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    if ((await checkDatabase(sql, READY_TIMEOUT_MS)).ok) return { status: 'ready' };
    return reply.code(503).send({ status: 'unavailable', reason: 'ledger database unreachable' });
  });
  metricsRoute(app, metrics.register);
  return app;
}
