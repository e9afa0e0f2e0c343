/**
 * The engine's HTTP endpoints (fastify, so tests use app.inject()):
 * - GET /health: the process is up.
 * - GET /ready: 200 once the games are recovered from the log, their loops run and every
 *   producer is connected; else 503. The body names each half.
 * - GET /metrics: Prometheus text (metrics.ts).
 * - GET /fairness: per game the chain that the next round reveals from: {slug, chain_epoch,
 *   commitment, chain_length, next_index}, so players can note a commitment before its rounds.
 * - POST /internal/cash-out: the API asks for the cash-out decision of a crash bet:
 *   body `{game, round_id, tx_id}`, signed with the token secret (lib/auth/internal-signature.ts,
 *   purpose `cash-out`); 200 `{status: "accepted", multiplier, at}` once BetCashedOut is in the
 *   log, 200 `{status: "crashed"}` when the flight has reached its point, 409 `{status:
 *   "not-flying"}` when that round is not in flight; 401 for a bad signature, 400 for a bad body.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { INTERNAL_SIGNATURE_HEADER, verifyInternal } from '../../lib/auth/internal-signature.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import type { CashOutAnswer } from './game-loop.ts';
import type { EngineMetrics } from './metrics.ts';

/** The purpose of the internal signature of a cash-out request. */
export const CASH_OUT_PURPOSE = 'cash-out';

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
  cashOut(game: GameSlug, roundId: number, txId: number): Promise<CashOutAnswer>;
  /** The token secret the API signs cash-out requests with; null before start. */
  secret(): Buffer | null;
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
  // The signature covers the exact bytes, so the body is parsed after checking it.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post<{ Body: string }>('/internal/cash-out', async (req, reply) => {
    const secret = view.secret();
    const signature = req.headers[INTERNAL_SIGNATURE_HEADER];
    if (
      !secret ||
      !verifyInternal(
        secret,
        CASH_OUT_PURPOSE,
        req.body,
        typeof signature === 'string' ? signature : undefined,
      )
    )
      return reply.code(401).send({ error: 'Unauthorized', success: false });
    let body: { game?: unknown; round_id?: unknown; tx_id?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return reply.code(400).send({ error: 'body: malformed JSON', success: false });
    }
    const game = typeof body.game === 'string' ? gameBySlug(body.game) : undefined;
    const valid = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) > 0;
    if (!game || !valid(body.round_id) || !valid(body.tx_id) || Object.keys(body).length !== 3)
      return reply.code(400).send({
        error: 'body: expected {game: a game slug, round_id: integer, tx_id: integer}',
        success: false,
      });
    const answer = await view.cashOut(game.slug, body.round_id, body.tx_id);
    return reply.code(answer.status === 'not-flying' ? 409 : 200).send(answer);
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'Not found', success: false }));
  return app;
}
