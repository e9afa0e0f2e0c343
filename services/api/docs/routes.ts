/**
 * Serves the contract documents beside /openapi.json (left out of it, as /openapi.json is):
 * GET /asyncapi.json (streams and topics, asyncapi.ts) and GET /openapi-webhooks.json (operator
 * callbacks, webhooks.ts). Each is built once, at registration.
 */
import type { FastifyPluginAsync } from 'fastify';
import { buildAsyncApi } from './asyncapi.ts';
import { buildWebhooksDocument } from './webhooks.ts';

export function contractDocumentRoutes(): FastifyPluginAsync {
  const asyncApi = JSON.stringify(buildAsyncApi());
  const webhooks = JSON.stringify(buildWebhooksDocument());
  return async (app) => {
    app.get('/asyncapi.json', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('application/json').send(asyncApi),
    );
    app.get('/openapi-webhooks.json', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('application/json').send(webhooks),
    );
  };
}
