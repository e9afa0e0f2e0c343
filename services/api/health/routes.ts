/**
 * Liveness and readiness (docs/conventions.md §12). `/health` answers while the process runs; `/ready`
 * answers 200 only when the read-model database answers `select 1` within `readyTimeoutMs`, so
 * a load balancer stops sending traffic to an instance that would answer 503.
 */
import type { FastifyPluginAsync } from 'fastify';
import { checkDatabase } from '../../../lib/db/health.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import { UNAVAILABLE_TEXT } from '../errors.ts';

/** Default time the database gets to answer a readiness probe, in ms. */
export const READY_TIMEOUT_MS = 1000;

const checks = {
  type: 'object',
  properties: { database: { type: 'string', description: '"ok" or why the database is not usable.' } },
} as const;

/** GET /health and GET /ready. */
export function healthRoutes(sql: Sql, readyTimeoutMs: number = READY_TIMEOUT_MS): FastifyPluginAsync {
  const startedAt = Date.now();
  return async (app) => {
    app.get(
      '/health',
      {
        schema: {
          summary: 'Liveness: the process is up',
          tags: ['ops'],
          response: {
            200: {
              type: 'object',
              properties: { status: { type: 'string', enum: ['ok'] }, uptime_s: { type: 'number' } },
            },
          },
        },
      },
      async () => ({ status: 'ok', uptime_s: Math.round((Date.now() - startedAt) / 1000) }),
    );

    app.get(
      '/ready',
      {
        schema: {
          summary: 'Readiness: the read-model database answers',
          tags: ['ops'],
          response: {
            200: { type: 'object', properties: { status: { type: 'string', enum: ['ready'] }, checks } },
            503: {
              type: 'object',
              properties: { error: { type: 'string' }, success: { type: 'boolean' }, checks },
            },
          },
        },
      },
      async (req, reply) => {
        const db = await checkDatabase(sql, readyTimeoutMs);
        if (db.ok) return { status: 'ready', checks: { database: 'ok' } };
        req.log.warn({ reason: db.reason }, 'not ready: database');
        return reply
          .code(503)
          .send({ error: UNAVAILABLE_TEXT, success: false, checks: { database: db.reason } });
      },
    );
  };
}
