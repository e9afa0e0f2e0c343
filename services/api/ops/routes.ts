/**
 * The ops console's API (/admin/ops/*, admin API key) as one encapsulated fastify plugin: the log's
 * topics and consumer groups (cluster.ts), dead letters with inspect and replay (dead-letters.ts),
 * read-model rebuilds run in this process (rebuilds.ts) and the edges' readiness and subscribers
 * (edges.ts). Errors are RFC 7807 problem JSON as on the rest of /admin (services/api/errors.ts
 * problemForError); inputs are validated by the zod rules of input.ts in the handlers.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { KeyLookup } from '../../../lib/auth/key-table.ts';
import { createKafka } from '../../../lib/log/kafka.ts';
import type { Logger } from '../../../lib/logger.ts';
import { requireAdmin } from '../access/guards.ts';
import { parseInput } from '../access/input.ts';
import type { ApiConfig } from '../config.ts';
import { problemForError } from '../errors.ts';
import { readConsumerGroups, readTopics } from './cluster.ts';
import { listDeadLetterTopics, readDeadLetterRecords, replayRecords } from './dead-letters.ts';
import { readEdges } from './edges.ts';
import { rebuildBody, rebuildParams, recordsQuery, replayBody, topicParams } from './input.ts';
import { createRebuildJobs } from './rebuilds.ts';
import { opsSchemas } from './schemas.ts';

export interface OpsDeps {
  readonly config: Pick<ApiConfig, 'kafka' | 'db' | 'money' | 'opsConsole'>;
  /** The API-key table (admin guard). */
  readonly table: KeyLookup;
  readonly logger: Logger;
  /** Clock, Unix ms (tests). */
  readonly now?: () => number;
}

/** The plugin registering every route of services/api/ops; it owns its Kafka client and rebuild jobs. */
export function opsRoutes(deps: OpsDeps): FastifyPluginAsync {
  const now = deps.now ?? Date.now;
  const { config, table, logger } = deps;
  const kafka = createKafka(config, 'api-ops', logger);
  const rebuilds = createRebuildJobs({ config, kafka, logger, now });
  return async (app) => {
    app.setValidatorCompiler(() => () => true);
    app.setErrorHandler((err, req, reply) => {
      const { status, body } = problemForError(err);
      if (status >= 500) req.log.error({ err }, 'ops api request failed');
      return reply.code(status).type('application/problem+json').send(body);
    });
    app.addHook('onRequest', async (req) => requireAdmin(table, req, now()));
    app.addHook('onClose', async () => rebuilds.close());

    app.get('/admin/ops/topics', { schema: opsSchemas.topics }, async () => ({
      topics: await readTopics(kafka, config),
    }));

    app.get('/admin/ops/consumer-groups', { schema: opsSchemas.groups }, async () => ({
      groups: await readConsumerGroups(kafka, config),
    }));

    app.get('/admin/ops/dead-letters', { schema: opsSchemas.deadLetters }, async () => ({
      topics: await listDeadLetterTopics(kafka, config),
    }));

    app.get('/admin/ops/dead-letters/:topic', { schema: opsSchemas.deadLetterRecords }, async (req) => {
      const { topic } = parseInput(topicParams, req.params, 'params');
      const q = parseInput(recordsQuery, req.query, 'query');
      return { records: await readDeadLetterRecords(kafka, config, topic, q.limit, q.after) };
    });

    app.post('/admin/ops/dead-letters/:topic/replay', { schema: opsSchemas.replay }, async (req) => {
      const { topic } = parseInput(topicParams, req.params, 'params');
      const body = parseInput(replayBody, req.body, 'body');
      return replayRecords(kafka, config, logger, topic, body.records);
    });

    app.post('/admin/ops/rebuilds', { schema: opsSchemas.startRebuild }, async (req, reply) => {
      const body = parseInput(rebuildBody, req.body, 'body');
      return reply.code(202).send(await rebuilds.start(body.read_model));
    });

    app.get('/admin/ops/rebuilds', { schema: opsSchemas.rebuilds }, async () => ({
      rebuilds: rebuilds.list(),
    }));

    app.get('/admin/ops/rebuilds/:id', { schema: opsSchemas.rebuild }, async (req) => {
      const { id } = parseInput(rebuildParams, req.params, 'params');
      return rebuilds.get(id);
    });

    app.post('/admin/ops/rebuilds/:id/swap', { schema: opsSchemas.swap }, async (req) => {
      const { id } = parseInput(rebuildParams, req.params, 'params');
      return rebuilds.swap(id);
    });

    app.get('/admin/ops/edges', { schema: opsSchemas.edges }, async () => ({
      edges: await readEdges(config.opsConsole.edgeUrls, config.opsConsole.edgeTimeoutMs),
    }));
  };
}
