/**
 * The engine's HTTP endpoints (fastify, so tests use app.inject()):
 * - GET /health: the process is up.
 * - GET /ready: 200 once the games are recovered from the log, their loops run and every
 *   producer is connected; else 503. The body names each half.
 * - GET /metrics: Prometheus text (metrics.ts).
 * - GET /fairness: per game the chain that the next round reveals from: {slug, chain_epoch,
 *   commitment, chain_length, next_index}, so players can note a commitment before its rounds.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { EngineMetrics } from './metrics.ts';

export interface FairnessInfo {
  readonly slug: string;
  readonly chain_epoch: number;
  /** Published h_0 of the chain, 64 hex. */
  readonly commitment: string;
  readonly chain_length: number;
  /** Chain index the next round reveals (1..chain_length). */
  readonly next_index: number;
}

export interface EngineView {
  readonly metrics: EngineMetrics;
  status(): { running: boolean; producersConnected: boolean };
  /** Empty until the engine has recovered its state. */
  fairness(): FairnessInfo[];
}

/** A fastify app serving the endpoints above; not listening. */
export function buildEngineHttp(view: EngineView): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_req, reply) => {
    const s = view.status();
    const ready = s.running && s.producersConnected;
    return reply.code(ready ? 200 : 503).send({ ready, ...s });
  });
  app.get('/metrics', async (_req, reply) => {
    const { registry } = view.metrics;
    return reply.type(registry.contentType).send(await registry.metrics());
  });
  app.get('/fairness', async () => view.fairness());
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'Not found', success: false }));
  return app;
}
