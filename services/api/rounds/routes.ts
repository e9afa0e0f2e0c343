/**
 * The four rounds endpoints of docs/contract.md ("REST"): GET /api/games, /api/latest/:game,
 * /api/history/:game?limit=, /api/history/type/:type?limit=. Registered under the API scope,
 * which carries the per-IP rate limit.
 */
import type { FastifyPluginAsync, FastifySchemaCompiler } from 'fastify';
import { gamesOfType } from '../../../rules/games/catalog.ts';
import { NotFoundError } from '../errors.ts';
import { parseGameParam, parseLimit, parseTypeParam } from './input.ts';
import type { RoundsQueries } from './queries.ts';
import { gamesSchema, historyByTypeSchema, historySchema, latestSchema } from './schemas.ts';
import type { RoundsWindow } from './window.ts';

/** A pre-serialised body of the rounds window (window.ts), sent as it is. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The schemas of these routes document the input for OpenAPI; input.ts enforces it, on the raw
 * values, with the texts the seed fixes. Schema validation is therefore switched off here: its
 * coercion would accept what input.ts rejects (`limit=1e2`) and answer with other texts.
 */
const documentOnly: FastifySchemaCompiler<unknown> = () => () => true;

interface GameRoute {
  Params: { game: string };
  Querystring: { limit?: string | string[] };
}

interface TypeRoute {
  Params: { type: string };
  Querystring: { limit?: string | string[] };
}

/**
 * Routes reading `window` while it is warm (latest and history, no database query) and `queries`
 * otherwise; errors are thrown and answered by the API's one error handler.
 */
export function roundsRoutes(queries: RoundsQueries, window?: RoundsWindow): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/games', { schema: gamesSchema }, async () => queries.listGames());

    app.get<GameRoute>(
      '/api/latest/:game',
      { schema: latestSchema, validatorCompiler: documentOnly },
      async (req, reply) => {
        const game = parseGameParam(req.params.game);
        const held = window?.latest(game);
        if (held) return reply.type(JSON_TYPE).send(held);
        const round = held === null ? undefined : await queries.latest(game);
        // Decided here: a known game without rounds is a 404 with its own text, so a client can
        // tell "wrong slug" from "not started yet".
        if (!round) throw new NotFoundError('NO_ROUNDS_YET', 'No rounds yet');
        return round;
      },
    );

    app.get<GameRoute>(
      '/api/history/:game',
      { schema: historySchema, validatorCompiler: documentOnly },
      async (req, reply) => {
        const game = parseGameParam(req.params.game);
        const limit = parseLimit(req.query.limit);
        const held = window?.history(game, limit);
        return held === undefined ? queries.history(game, limit) : reply.type(JSON_TYPE).send(held);
      },
    );

    app.get<TypeRoute>(
      '/api/history/type/:type',
      { schema: historyByTypeSchema, validatorCompiler: documentOnly },
      async (req, reply) => {
        const type = parseTypeParam(req.params.type);
        const limit = parseLimit(req.query.limit);
        const held = window?.historyByType(type, limit);
        if (held !== undefined) return reply.type(JSON_TYPE).send(held);
        return queries.historyByType(type, gamesOfType(type), limit);
      },
    );
  };
}
